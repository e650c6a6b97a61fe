/**
 * The embedding facade for TypeScript programs that do not use Effect: `query({ prompt, options })`
 * in the Claude Agent SDK's shape. It returns a {@link Query}, an `AsyncGenerator` of the messages
 * headless `stream-json` prints (`system`/`init`, `assistant`, `user`, `stream_event`, one `result`
 * per turn, ...), with `interrupt()`, `setModel()` and `close()`; `options` takes the Agent SDK's
 * names and meanings for what Keel supports.
 *
 * Inside it is the same Layer graph and session as `keel -p` (`Runtime`), run as one Effect stream:
 * nothing starts until the first `next()`. The session's turns go through its `SessionRuntime`, as
 * headless `stream-json` input does: each prompt message is submitted as soon as the host yields it
 * (while a turn runs it waits, by its `priority`), and the turns' messages come out in the order the
 * turns run. Turns run at their own pace; their messages wait for the consumer. `return()` (a `break`
 * out of `for await`) interrupts the run, which stops the running turn (its HTTP request is aborted),
 * drops what waits and closes the MCP servers. Errors before a turn (no API key, invalid settings,
 * a bad MCP config, an option Keel does not support) reject `next()` with a {@link QueryError} whose
 * message is the line `keel` would print.
 *
 * @since 0.1.0
 */
import {
  Admission,
  AnthropicModel,
  Ids,
  Permissions,
  type SdkMessage,
  SdkProjection,
  type Session,
  SessionRuntime,
  Thinking
} from "@keel/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ActionAnswerer from "../ActionAnswerer.js"
import * as Runtime from "../Runtime.js"
import * as Input from "./Input.js"
import { PromptFailure } from "./Input.js"
import {
  CAPABILITIES,
  environment,
  isRecord,
  type Options,
  type PermissionUpdate,
  providerOf,
  resolve,
  type SDKControlInterruptResponse,
  type SDKMessage,
  type SDKUserMessage
} from "./Options.js"
import { QueryError } from "./QueryError.js"

export type {
  CanUseTool,
  McpHttpServerConfig,
  McpServerConfig,
  McpSSEServerConfig,
  McpStdioServerConfig,
  Options,
  PermissionMode,
  PermissionResult,
  PermissionUpdate,
  PermissionUpdateDestination,
  SDKControlInterruptResponse,
  SDKMessage,
  SDKSystemInit,
  SDKUserMessage
} from "./Options.js"
export { CAPABILITIES, SUPPORTED_OPTIONS } from "./Options.js"
export { QueryError } from "./QueryError.js"

/**
 * A running query: iterate it (`for await`) for its messages. Leaving the loop early, `return()`
 * and `close()` stop the running turn and close everything the query started (MCP servers, HTTP
 * connections).
 *
 * @category Models
 */
export interface Query extends AsyncGenerator<SDKMessage, void> {
  /**
   * Stops the running turn, if any: it ends with an `error_during_execution` result. The streamed
   * messages that wait still run, in their order; the receipt lists their `uuid`s (`still_queued`).
   */
  interrupt(): Promise<SDKControlInterruptResponse>
  /** Switches later model calls to `model`; without one, back to the model the query started with. */
  setModel(model?: string): Promise<void>
  /**
   * Later model calls' thinking budget (the Agent SDK's, deprecated there): 0 turns thinking off,
   * `null` goes back to the model's default, any other number is the budget (on adaptive-thinking
   * models: on). The effort is kept.
   */
  setMaxThinkingTokens(maxThinkingTokens: number | null): Promise<void>
  /** Ends the query now, as `return()` does, without waiting. */
  close(): void
}

/** How many messages the run hands over ahead of `next()` (the rest wait in the runtime). @category Constants */
export const BUFFER = 16

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/** Completes when `signal` aborts (at once if it has). */
const abortedBy = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/** What the {@link Query} object's methods use once the session is open. */
interface Opened {
  readonly session: Session.Service
  /** The model `setModel()` without one goes back to. */
  readonly defaultModel: string
  /** Stops the running turn (what waits still runs), with the receipt. */
  readonly interrupt: Effect.Effect<SDKControlInterruptResponse>
}

/** What the run tells the {@link Query} object, and asks it. */
interface Controls {
  readonly opened: (opened: Opened) => void
  readonly model: () => string | undefined
  /** `setMaxThinkingTokens()` calls made before the session opened, in order. */
  readonly thinkingTokens: () => ReadonlyArray<number | null>
}

/** The session served through its runtime. */
interface Served {
  readonly runtime: SessionRuntime.Service
  /** Stops the running turn (what waits still runs), with the receipt. */
  readonly interrupt: Effect.Effect<SDKControlInterruptResponse>
  /**
   * Every turn's messages, in the order the turns run; it ends once the input has ended and every
   * turn it queued has run, and fails after them if the input failed.
   */
  readonly messages: Stream.Stream<SdkMessage.SdkMessage, QueryError | PromptFailure>
}

/**
 * Serves `session` through a `SessionRuntime`: every message of the input is submitted as soon as
 * the host yields it (it waits by its `priority` while a turn runs; `now` stops the running turn),
 * at most `Admission.MAX_QUEUED` at once (the input is not read further until one starts). An abort
 * stops reading, drops what waits and stops the running turn, whose `result` is the last message.
 */
const serve = (
  session: Session.Service,
  prompt: string | AsyncIterable<SDKUserMessage>,
  signal: AbortSignal | undefined,
  canUseTool: Permissions.CanUseTool | undefined
): Effect.Effect<Served, never, Runtime.Services | Scope.Scope> =>
  Effect.gen(function*() {
    // The runtime in a scope of its own, closed once the input has ended and nothing runs or waits
    // (which ends its stream of turns after the last one), or with the query.
    const runtimeScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const runtime = yield* SessionRuntime.make(session).pipe(Scope.extend(runtimeScope))
    const turns = yield* runtime.turns
    if (canUseTool !== undefined) yield* ActionAnswerer.answerWith(canUseTool)
    // What the transcript left (a turn cut while it waited, queued input) runs first.
    const resumed = yield* runtime.resume
    // Nobody can answer here: what waited is refused (and a resumed turn's call is denied).
    if (canUseTool === undefined) yield* Runtime.refusePending(resumed, "nobody can answer it in this query")
    // The host's uuids of the submitted messages, by turn id, and of the one read but not yet submitted.
    const uuids = new Map<string, string>()
    let held: string | undefined
    // A permit per waiting turn, given back as it starts: the input waits while the queue is full.
    const room = yield* Effect.makeSemaphore(Admission.MAX_QUEUED)
    yield* Effect.forkScoped(Stream.runForEach(yield* runtime.turns, (turn) => {
      uuids.delete(turn.turnId)
      return room.release(1)
    }))
    const submit = (next: Input.Prompt, uuid: string | undefined) =>
      Effect.gen(function*() {
        yield* room.take(1)
        // Never full: a permit per waiting turn.
        const { turnId } = yield* Effect.orDie(runtime.submit(next.input, { priority: next.priority }))
        if (uuid !== undefined) uuids.set(turnId, uuid)
      })
    const reader = yield* Effect.forkScoped(
      typeof prompt === "string"
        ? submit({ input: prompt, priority: undefined }, undefined)
        : Stream.runForEach(
          Input.messages(prompt, (message) => (held = typeof message.uuid === "string" ? message.uuid : undefined)),
          (message) =>
            Effect.flatMap(Input.toPrompt(message), (next) => submit(next, held)).pipe(
              Effect.ensuring(Effect.sync(() => (held = undefined)))
            )
        )
    )
    if (signal !== undefined) {
      yield* Effect.forkScoped(Effect.zipRight(
        abortedBy(signal),
        Effect.all([Fiber.interrupt(reader), runtime.clear, runtime.interrupt], { discard: true })
      ))
    }
    const ended = yield* Effect.forkScoped(Effect.gen(function*() {
      const input = yield* Fiber.await(reader)
      yield* runtime.idle
      yield* Scope.close(runtimeScope, Exit.void)
      // Input stopped by the abort ended cleanly; input that failed fails the query after the turns it queued.
      if (Exit.isFailure(input) && !Cause.isInterruptedOnly(input.cause)) return yield* input
    }))
    return {
      runtime,
      interrupt: Effect.gen(function*() {
        const reading = held
        const queued = yield* runtime.queue
        yield* runtime.interrupt
        const waiting = queued.flatMap((q) => uuids.get(q.id) ?? [])
        return { still_queued: reading === undefined || waiting.includes(reading) ? waiting : [...waiting, reading] }
      }),
      // A turn that started is never cancelled (only waiting ones are).
      messages: Stream.flatMap(turns, (turn) => Stream.catchAll(turn.events, () => Stream.empty)).pipe(
        Stream.concat(Stream.execute(Fiber.join(ended)))
      )
    }
  })

/** `messages` with {@link CAPABILITIES} on each `system`/`init`, and `warnings` right after the first. */
const withInit = <E>(
  messages: Stream.Stream<SdkMessage.SdkMessage, E>,
  warnings: ReadonlyArray<SDKMessage>
): Stream.Stream<SDKMessage, E> => {
  let pending = warnings
  return Stream.mapConcat(messages, (message): ReadonlyArray<SDKMessage> => {
    if (message.type !== "system" || message.subtype !== "init") return [message]
    const out = [{ ...message, capabilities: CAPABILITIES }, ...pending]
    pending = []
    return out
  })
}

/** The whole run as one stream: options, layers, session, then the turns of the session's runtime. */
const run = (
  prompt: string | AsyncIterable<SDKUserMessage>,
  options: Options,
  env: Readonly<Record<string, string>> | undefined,
  controls: Controls
): Stream.Stream<SDKMessage, QueryError | PromptFailure> => {
  // Stops the running turn, once the runtime exists (a permission request before that cannot happen).
  let stop: Effect.Effect<void> = Effect.void
  // The session's ids, once it is open.
  let ids: Ids.Ids["Type"] = Ids.crypto
  // The Agent SDK's callback shape over Keel's (`interrupt: true` also stops the turn).
  const canUseTool: Permissions.CanUseTool | undefined = options.canUseTool === undefined ? undefined : (() => {
    const ask = options.canUseTool
    return async (toolName, input, { reason, signal, suggestions, toolUseId }) => {
      const answer = await ask(toolName, isRecord(input) ? input : {}, {
        signal,
        toolUseID: toolUseId,
        requestId: ids.uuid(),
        decisionReason: reason,
        // Fresh objects each ask: the host may keep and change them.
        ...(suggestions !== undefined ? { suggestions: structuredClone(suggestions) as Array<PermissionUpdate> } : {})
      })
      if (answer === null) {
        return { behavior: "deny", message: `Permission to use ${toolName} was denied: the permission callback gave no answer.` }
      }
      if (answer.behavior === "allow") return answer
      if (answer.interrupt === true) Effect.runFork(stop)
      return { behavior: "deny", message: answer.message }
    }
  })()
  const setup = Effect.gen(function*() {
    // The host's callback answers the session's pending actions (see `ActionAnswerer`).
    const resolved = yield* resolve(options, env, undefined)
    const opened = Effect.gen(function*() {
      const requested = controls.model()
      const runtime = {
        ...(requested === undefined ? resolved.runtime : { ...resolved.runtime, model: requested }),
        askThroughActions: canUseTool !== undefined
      }
      const context = yield* Layer.build(Runtime.layer(runtime))
      const { session, warnings } = yield* Runtime.openSession(runtime).pipe(Effect.provide(context))
      for (const tokens of controls.thinkingTokens()) {
        yield* session.setThinking(Thinking.withMaxThinkingTokens(yield* session.thinking, tokens))
      }
      ids = Context.get(context, Ids.Ids)
      const init = yield* session.init
      const served = yield* serve(session, prompt, resolved.signal, canUseTool).pipe(Effect.provide(context))
      stop = served.runtime.interrupt
      controls.opened({
        session,
        // `setModel()` without a model goes back to this one: the session's own, unless `setModel` came before it opened.
        defaultModel: requested === undefined ? init.model : resolved.runtime.model ??
          (yield* AnthropicModel.modelConfig.pipe(Effect.orElseSucceed(() => init.model))),
        interrupt: served.interrupt
      })
      const stamp = { sessionId: init.session_id, uuid: ids.uuid, parentToolUseId: null }
      return withInit(served.messages, warnings.map((content) => SdkProjection.warning(content, stamp)))
    })
    return yield* resolved.signal === undefined
      ? opened
      : Effect.raceFirst(opened, Effect.as(abortedBy(resolved.signal), Stream.empty))
  })

  // Any other failure (no API key, invalid settings or MCP config, a defect) as `keel` would print it.
  return Stream.unwrapScoped(setup).pipe(
    Stream.catchAllCause((cause): Stream.Stream<never, QueryError | PromptFailure> => {
      if (Cause.isInterruptedOnly(cause)) return Stream.empty
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure) && (failure.value instanceof QueryError || failure.value instanceof PromptFailure)) {
        return Stream.fail(failure.value)
      }
      const described = Runtime.describeFailure(
        cause,
        options.debug === true,
        "set debug: true in the query options for the stack trace"
      )
      return Stream.fail(new QueryError({ message: described.lines.join("\n"), code: described.code }))
    })
  )
}

// ---------------------------------------------------------------------------------------------
// The AsyncGenerator
// ---------------------------------------------------------------------------------------------

type Item = Exit.Exit<SDKMessage, Option.Option<QueryError | PromptFailure>>

type State =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Running"; readonly scope: Scope.CloseableScope; readonly queue: Queue.Dequeue<Item> }
  | { readonly _tag: "Done" }

const DONE: IteratorReturnResult<void> = { done: true, value: undefined }

class KeelQuery implements Query {
  private state: State = { _tag: "Idle" }
  private closing: Promise<void> | undefined
  private opened: Opened | undefined
  private requestedModel: string | undefined
  private readonly requestedThinkingTokens: Array<number | null> = []

  constructor(
    private readonly prompt: string | AsyncIterable<SDKUserMessage>,
    private readonly options: Options
  ) {}

  [Symbol.asyncIterator](): this {
    return this
  }

  async next(): Promise<IteratorResult<SDKMessage, void>> {
    if (this.state._tag === "Done") return DONE
    const state = this.state._tag === "Idle" ? (this.state = this.start()) : this.state
    const taken = await Effect.runPromiseExit(Queue.take(state.queue))
    // Interrupted: the queue was shut down by `return()` while this call waited.
    if (Exit.isFailure(taken)) return DONE
    const item = taken.value
    if (Exit.isSuccess(item)) return { done: false, value: item.value }
    await this.finish()
    const failure = Cause.failureOption(item.cause)
    if (Option.isSome(failure) && Option.isSome(failure.value)) {
      const error = failure.value.value
      throw error instanceof PromptFailure ? error.error : error
    }
    if (Option.isNone(failure)) throw Cause.squash(item.cause)
    return DONE
  }

  async return(): Promise<IteratorResult<SDKMessage, void>> {
    await this.finish()
    return DONE
  }

  async throw(error: unknown): Promise<IteratorResult<SDKMessage, void>> {
    await this.finish()
    throw error
  }

  async interrupt(): Promise<SDKControlInterruptResponse> {
    return this.opened === undefined || this.state._tag !== "Running"
      ? { still_queued: [] }
      : await Effect.runPromise(this.opened.interrupt)
  }

  async setModel(model?: string): Promise<void> {
    if (this.opened === undefined) {
      this.requestedModel = model
      return
    }
    await Effect.runPromise(this.opened.session.setModel(model ?? this.opened.defaultModel))
  }

  async setMaxThinkingTokens(maxThinkingTokens: number | null): Promise<void> {
    if (maxThinkingTokens !== null && !(Number.isInteger(maxThinkingTokens) && maxThinkingTokens >= 0)) {
      throw new QueryError({
        message: `query(): setMaxThinkingTokens needs a whole number of tokens, 0 or more, or null; got ${String(maxThinkingTokens)}`,
        code: 2
      })
    }
    const opened = this.opened
    if (opened === undefined) {
      this.requestedThinkingTokens.push(maxThinkingTokens)
      return
    }
    await Effect.runPromise(
      Effect.flatMap(opened.session.thinking, (s) => opened.session.setThinking(Thinking.withMaxThinkingTokens(s, maxThinkingTokens)))
    )
  }

  close(): void {
    void this.finish()
  }

  /**
   * Starts the run: a fiber drains it into a bounded queue, in a scope of its own. With `env`, the
   * fiber (and every fiber it forks) reads configuration from that environment.
   */
  private start(): Extract<State, { readonly _tag: "Running" }> {
    const env = environment(this.options)
    const stream = run(this.prompt, this.options, env, {
      opened: (opened) => (this.opened = opened),
      model: () => this.requestedModel,
      thinkingTokens: () => this.requestedThinkingTokens
    })
    const drain = Stream.toQueueOfElements(stream, { capacity: BUFFER })
    const scope = Effect.runSync(Scope.make())
    const queue = Effect.runSync(
      (env === undefined ? drain : Effect.withConfigProvider(drain, providerOf(env))).pipe(Scope.extend(scope))
    )
    return { _tag: "Running", scope, queue }
  }

  /** Ends the query: interrupts the run (its finalizers close the MCP servers and the HTTP request) and waits for it. */
  private finish(): Promise<void> {
    if (this.closing !== undefined) return this.closing
    const state = this.state
    this.state = { _tag: "Done" }
    this.closing = state._tag === "Running" ? Effect.runPromise(Scope.close(state.scope, Exit.void)) : Promise.resolve()
    return this.closing
  }
}

/**
 * Runs Keel as the Claude Agent SDK's `query()` does: `prompt` is one prompt (one turn), or an
 * `AsyncIterable` of user messages (streaming input: one turn per message, in one session; each
 * message is queued as soon as it is yielded, runs when no turn runs, by its `priority`, and the
 * query ends once the input has ended and every queued message has run). The returned
 * {@link Query} yields the session's messages, turn by turn in the order they run; nothing runs
 * before the first `next()`. An `abortController` abort stops the running turn (its `result` is
 * still yielded), drops the messages that wait and ends the query.
 *
 * @example
 * ```ts
 * import { query } from "@keel/cli"
 *
 * for await (const message of query({ prompt: "What files are here?", options: { cwd: "." } })) {
 *   if (message.type === "result") console.log(message.result)
 * }
 * ```
 *
 * @category Constructors
 */
export const query = (params: {
  readonly prompt: string | AsyncIterable<SDKUserMessage>
  readonly options?: Options
}): Query => new KeelQuery(params.prompt, params.options ?? {})
