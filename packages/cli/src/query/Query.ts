/**
 * The embedding facade for TypeScript programs that do not use Effect: `query({ prompt, options })`
 * in the Claude Agent SDK's shape. It returns a {@link Query}, an `AsyncGenerator` of the messages
 * headless `stream-json` prints (`system`/`init`, `assistant`, `user`, `stream_event`, one `result`
 * per turn, ...), with `interrupt()`, `setModel()` and `close()`; `options` takes the Agent SDK's
 * names and meanings for what Keel supports.
 *
 * Inside it is the same Layer graph and session as `keel -p` (`Runtime`), run as one Effect stream:
 * nothing starts until the first `next()`; the stream is drained into a small bounded queue, so it
 * runs at most {@link BUFFER} messages ahead of the consumer; `return()` (a `break` out of
 * `for await`) interrupts it, which stops the running turn (its HTTP request is aborted) and closes
 * the MCP servers. Errors before a turn (no API key, invalid settings, a bad MCP config, an option
 * Keel does not support) reject `next()` with a {@link QueryError} whose message is the line `keel`
 * would print.
 *
 * @since 0.1.0
 */
import { AnthropicModel, Ids, Message, Permissions, SdkProjection, type Session } from "@keel/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Runtime from "../Runtime.js"
import { environment, isRecord, type Options, providerOf, resolve, type SDKMessage, type SDKUserMessage } from "./Options.js"
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
  SDKMessage,
  SDKUserMessage
} from "./Options.js"
export { SUPPORTED_OPTIONS } from "./Options.js"
export { QueryError } from "./QueryError.js"

/**
 * A running query: iterate it (`for await`) for its messages. Leaving the loop early, `return()`
 * and `close()` stop the running turn and close everything the query started (MCP servers, HTTP
 * connections).
 *
 * @category Models
 */
export interface Query extends AsyncGenerator<SDKMessage, void> {
  /** Stops the running turn, if any: it ends with an `error_during_execution` result. Later streamed messages still run. */
  interrupt(): Promise<void>
  /** Switches later model calls to `model`; without one, back to the model the query started with. */
  setModel(model?: string): Promise<void>
  /** Ends the query now, as `return()` does, without waiting. */
  close(): void
}

/** How many messages the run may get ahead of the consumer. @category Constants */
export const BUFFER = 16

/** A failure of the caller's prompt iterable, rethrown as it was. */
class PromptFailure extends Data.TaggedError("PromptFailure")<{ readonly error: unknown }> {}

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

/**
 * The caller's prompt messages, pulled one at a time (the next only once the previous turn is
 * done). Unlike `Stream.fromAsyncIterable`, closing does not wait for the iterator's `return()`: a
 * generator waiting for its next input would keep the query from closing.
 */
const promptsOf = (iterable: AsyncIterable<SDKUserMessage>): Stream.Stream<SDKUserMessage, PromptFailure> =>
  Stream.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.try({ try: () => iterable[Symbol.asyncIterator](), catch: (error) => new PromptFailure({ error }) }),
      (iterator) =>
        Effect.sync(() => {
          Promise.resolve(iterator.return?.()).catch(() => undefined)
        })
    ),
    (iterator) =>
      Stream.repeatEffectOption(
        Effect.tryPromise({ try: () => iterator.next(), catch: (error) => Option.some(new PromptFailure({ error })) }).pipe(
          Effect.flatMap((next) => next.done === true ? Effect.fail(Option.none()) : Effect.succeed(next.value))
        )
      )
  ))

/** A streamed message as a session prompt: string content as a prompt, blocks as a `UserMessage`. */
const toPrompt = (input: SDKUserMessage): Effect.Effect<string | Message.UserMessage, QueryError> => {
  const bad = (why: string) =>
    Effect.fail(new QueryError({ message: `query(): a streamed prompt message ${why}`, code: 2 }))
  if (!isRecord(input) || input.type !== "user" || !isRecord(input.message) || input.message.role !== "user") {
    return bad(`must be { type: "user", message: { role: "user", content }, parent_tool_use_id: null }`)
  }
  if (input.shouldQuery === false) return bad("has shouldQuery: false; Keel runs a turn for every message")
  const content = input.message.content
  if (typeof content === "string") return Effect.succeed(content)
  return Message.decode({ role: "user", content }).pipe(
    Effect.flatMap((m) => m.role === "user" ? Effect.succeed(m) : bad("is not a user message")),
    Effect.catchTag("ParseError", (e) => bad(`has content Keel cannot read: ${e.message.split("\n")[0]}`))
  )
}

/** What the run tells the {@link Query} object once the session is open. */
interface Controls {
  readonly opened: (session: Session.Service, defaultModel: string) => void
  readonly model: () => string | undefined
}

/** The whole run as one stream: options, layers, session, then one turn per prompt. */
const run = (
  prompt: string | AsyncIterable<SDKUserMessage>,
  options: Options,
  env: Readonly<Record<string, string>> | undefined,
  controls: Controls
): Stream.Stream<SDKMessage, QueryError | PromptFailure> => {
  let session: Session.Service | undefined
  // The session's ids, once it is open (a permission request before that cannot happen).
  let ids: Ids.Ids["Type"] = Ids.crypto
  // The Agent SDK's callback shape over Keel's (`interrupt: true` also stops the turn).
  const canUseTool: Permissions.CanUseTool | undefined = options.canUseTool === undefined ? undefined : (() => {
    const ask = options.canUseTool
    return async (toolName, input, { reason, signal, toolUseId }) => {
      const answer = await ask(toolName, isRecord(input) ? input : {}, {
        signal,
        toolUseID: toolUseId,
        requestId: ids.uuid(),
        decisionReason: reason
      })
      if (answer === null) {
        return { behavior: "deny", message: `Permission to use ${toolName} was denied: the permission callback gave no answer.` }
      }
      if (answer.behavior === "allow") return answer
      if (answer.interrupt === true && session !== undefined) Effect.runFork(session.interrupt)
      return { behavior: "deny", message: answer.message }
    }
  })()
  const setup = Effect.gen(function*() {
    const resolved = yield* resolve(options, env, canUseTool)
    const opened = Effect.gen(function*() {
      const requested = controls.model()
      const runtime = requested === undefined ? resolved.runtime : { ...resolved.runtime, model: requested }
      const context = yield* Layer.build(Runtime.layer(runtime))
      const { session: opened, warnings } = yield* Runtime.openSession(runtime).pipe(Effect.provide(context))
      session = opened
      ids = Context.get(context, Ids.Ids)
      const init = yield* opened.init
      // `setModel()` without a model goes back to this one: the session's own, unless `setModel` came before it opened.
      controls.opened(
        opened,
        requested === undefined ? init.model : resolved.runtime.model ??
          (yield* AnthropicModel.modelConfig.pipe(Effect.orElseSucceed(() => init.model)))
      )
      const stamp = { sessionId: init.session_id, uuid: ids.uuid, parentToolUseId: null }
      const notes = warnings.map((content) => SdkProjection.warning(content, stamp))
      return turns(opened, notes, resolved.signal)
    })
    return yield* resolved.signal === undefined
      ? opened
      : Effect.raceFirst(opened, Effect.as(abortedBy(resolved.signal), Stream.empty))
  })

  /** One turn per prompt; after an abort, no further prompt is read. `warnings` follow the first `init`. */
  const turns = (
    session: Session.Service,
    warnings: ReadonlyArray<SDKMessage>,
    signal: AbortSignal | undefined
  ): Stream.Stream<SDKMessage, QueryError | PromptFailure> => {
    const prompts: Stream.Stream<string | Message.UserMessage, QueryError | PromptFailure> = typeof prompt === "string"
      ? Stream.make(prompt)
      : Stream.mapEffect(promptsOf(prompt), toPrompt)
    let pending = warnings
    return (signal === undefined ? prompts : Stream.interruptWhen(prompts, abortedBy(signal))).pipe(
      Stream.flatMap((p) => session.submit(p, { signal })),
      Stream.mapConcat((message) => {
        if (pending.length === 0 || message.type !== "system" || message.subtype !== "init") return [message]
        const out = [message, ...pending]
        pending = []
        return out
      })
    )
  }

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
  private session: Session.Service | undefined
  private defaultModel: string | undefined
  private requestedModel: string | undefined

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

  async interrupt(): Promise<void> {
    if (this.session !== undefined) await Effect.runPromise(this.session.interrupt)
  }

  async setModel(model?: string): Promise<void> {
    if (this.session === undefined) {
      this.requestedModel = model
      return
    }
    const next = model ?? this.defaultModel
    if (next !== undefined) await Effect.runPromise(this.session.setModel(next))
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
      opened: (session, defaultModel) => {
        this.session = session
        this.defaultModel = defaultModel
      },
      model: () => this.requestedModel
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
 * `AsyncIterable` of user messages (streaming input: one turn per message, in one session, the next
 * message read once the previous turn's `result` is out). The returned {@link Query} yields the
 * session's messages; nothing runs before the first `next()`.
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
