/**
 * Headless mode (`keel -p`) on the Layer graph of `Runtime`, in Claude Code's headless shapes:
 *
 * - `run`: one turn for a prompt, printed as text, one JSON result (every message with `--verbose`),
 *   or `stream-json` lines. The exit code is 1 when the result is an error.
 * - `runStreamInput` (`--input-format stream-json`): one long-lived session whose runtime admits a
 *   turn for each user message read from stdin, a JSON line each, as the lines arrive (they wait
 *   their turn by priority while one runs), and prints each turn's `stream-json` lines ending with
 *   its `result`, in the order the turns run. At the end of input it exits, with 1 when the last
 *   result was an error (as Claude Code). A line that is not a user message loses nothing: it gets
 *   an error `result` of its own (so a client that waits for a result per line it sent never
 *   hangs) and a line on stderr, and the session goes on with the next line.
 *
 * @since 0.1.0
 */
import { Actions, Commands, Ids, Permissions, SdkBlocks, SdkMessage, SessionRuntime } from "@keel/core"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Agents, McpServers } from "@keel/tools"
import * as ControlMessages from "./ControlMessages.js"
import type { Flags } from "./Flags.js"
import * as HookMessages from "./hook/HookMessages.js"
import * as HostHooks from "./hook/HostHooks.js"
import * as HostAnswers from "./host/HostAnswers.js"
import * as HostStartup from "./host/HostStartup.js"
import * as InitializeAgents from "./host/InitializeAgents.js"
import * as HostRequests from "./HostRequests.js"
import * as Initialize from "./Initialize.js"
import * as RunFailure from "./RunFailure.js"
import * as Runtime from "./Runtime.js"
import { type InputLine, lineErrorResult, parseLine } from "./StreamJsonInput.js"

/** The stream-json input lines (`StreamJsonInput`), read here. */
export { type InputLine, lineErrorResult, parseLine } from "./StreamJsonInput.js"

/** Where headless output goes (stdout and stderr, or test sinks). @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /**
   * Called with the run's interrupt once the session exists, so a signal handler can stop it: the
   * running turn ends with an error result, and with `stream-json` input no further line is read.
   */
  readonly onInterruptReady?: (interrupt: () => void) => void
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`

/**
 * What text mode prints on stderr while a turn waits or recovers, so a person can tell waiting from
 * hung (stdout keeps only the answer).
 *
 * @category Rendering
 */
export const progressLine = (message: SdkMessage.SdkMessage): string | undefined => {
  if (message.type !== "system") return undefined
  switch (message.subtype) {
    case "api_retry":
      return `keel: ${message.error_message}; retrying in ${seconds(message.retry_delay_ms)} ` +
        `(retry ${message.attempt}/${message.max_retries >= SdkMessage.UNBOUNDED_RETRIES ? "unlimited" : message.max_retries})\n`
    case "notification":
      switch (message.key) {
        case "stream_stalled":
          return `keel: no data from the API for ${seconds(message.idle_ms)}; the request is retried at ${seconds(message.timeout_ms)}\n`
        case "api_retry_wait":
          return `keel: still waiting to retry (${seconds(message.retry_in_ms)} left)\n`
        default:
          return undefined
      }
    case "status":
      return message.status === "compacting" ? "keel: compacting the conversation\n" : undefined
    case "permission_denied":
      return `keel: ${message.message}\n`
    case "informational":
      return `keel: ${message.content}\n`
    case "compact_boundary":
      return `keel: compacted the conversation from ~${message.compact_metadata.pre_tokens} to ~${message.compact_metadata.post_tokens} tokens\n`
    default:
      return undefined
  }
}

/**
 * Runs one turn, printing its messages as they come (`stream-json` lines; text mode's progress on
 * stderr; with `json --verbose` they are kept in `collected`). Returns the turn's result.
 */
const runTurn = (
  flags: Flags,
  io: Io,
  turn: Stream.Stream<SdkMessage.SdkMessage>,
  collected: Array<SdkMessage.SdkMessage>
): Effect.Effect<SdkMessage.Result | undefined> =>
  Effect.suspend(() => {
    let result: SdkMessage.Result | undefined
    return turn.pipe(
      Stream.runForEachChunk((chunk) =>
        Effect.sync(() => {
          let lines = ""
          for (const message of chunk) {
            if (message.type === "result") result = message
            if (flags.outputFormat === "text" && message.type === "system") {
              const line = progressLine(message)
              if (line !== undefined) io.err(line)
            }
            // An answer goes out as Claude Code prints it: one assistant message per content block.
            if (flags.outputFormat === "stream-json") {
              for (const part of SdkBlocks.perBlock(message, Ids.crypto.uuid)) lines += JSON.stringify(part) + "\n"
            } else if (flags.outputFormat === "json" && flags.verbose) collected.push(...SdkBlocks.perBlock(message, Ids.crypto.uuid))
          }
          if (lines.length > 0) io.out(lines)
        })
      ),
      Effect.map(() => result)
    )
  })

/** With `--include-hook-events` (and `stream-json`), each hook run's messages as stdout lines. */
const hookEvents = (flags: Flags, out: (text: string) => void): Runtime.Options["onHookEvent"] =>
  flags.includeHookEvents && flags.outputFormat === "stream-json"
    ? (event) => out(JSON.stringify(HookMessages.messageOf(event, Ids.crypto.uuid)) + "\n")
    : undefined

/** Prints a run's failure outside a turn (one line each, a stack only with `--debug`); returns its exit code. */
const failed = (cause: Cause.Cause<unknown>, flags: Flags, io: Io): number => {
  const failure = Runtime.describeFailure(cause, flags.debug)
  io.err(failure.lines.map((line) => `keel: ${line}\n`).join(""))
  return failure.code
}

/**
 * Runs `prompt` headless through the session's runtime and prints its output: the turn, and any
 * turn that follows it without new input (what a resumed transcript left queued, and a turn a
 * crash left open, first; the goal's continuation turns after a `/goal`). A resumed session may
 * have no prompt: its open turn runs on alone. Text and JSON print the last result. Nobody can answer a
 * pending action here: asks are denied, and those a resumed transcript left are refused. Returns
 * the process exit code.
 *
 * @category Running
 */
export const run = async (flags: Flags, prompt: string | undefined, io: Io): Promise<number> => {
  const options: Runtime.Options = { ...flags, cwd: process.cwd(), onHookEvent: hookEvents(flags, io.out) }
  const program = Effect.gen(function*() {
    const { session, warnings, transcriptWarnings } = yield* Runtime.openSession(options)
    // Text mode prints the session's own warnings as they come (progressLine); the others on stderr here.
    const startup = flags.outputFormat === "text" ? warnings : [...warnings, ...transcriptWarnings]
    for (const warning of startup) io.err(`keel: ${warning}\n`)
    const runtimeScope = yield* Scope.make()
    const runtime = yield* SessionRuntime.make(session).pipe(Scope.extend(runtimeScope))
    const messages: Array<SdkMessage.SdkMessage> = []
    let result: SdkMessage.Result | undefined
    const printer = yield* Effect.fork(Stream.runForEach(
      yield* runtime.turns,
      (turn) =>
        runTurn(flags, io, Stream.catchAll(turn.events, () => Stream.empty), messages).pipe(
          Effect.map((last) => (result = last ?? result))
        )
    ))
    const resumed = yield* runtime.resume
    yield* Runtime.refusePending(resumed, "nobody can answer it in a -p run")
    // No prompt (a resumed session): the turn a crash left open runs on, else there is nothing to do.
    if (prompt !== undefined) yield* runtime.submit(prompt)
    else if (resumed.resumedTurn === undefined && resumed.queued.length === 0) {
      yield* Scope.close(runtimeScope, Exit.void)
      return yield* new RunFailure.NothingToResume({ sessionId: yield* session.sessionId })
    }
    // Ctrl+C: what waits is dropped, the running turn stops (a goal then stops too: its turn failed).
    io.onInterruptReady?.(() => Effect.runFork(Effect.zipRight(runtime.clear, runtime.interrupt)))
    yield* runtime.idle
    yield* Scope.close(runtimeScope, Exit.void)
    yield* Fiber.await(printer)
    return { result, messages }
  }).pipe(Effect.scoped, Effect.provide(Runtime.layer(options)))

  const exit = await Effect.runPromiseExit(program)
  if (Exit.isFailure(exit)) return failed(exit.cause, flags, io)
  const { messages, result } = exit.value
  if (result === undefined) {
    io.err("keel: the turn ended without a result\n")
    return 1
  }
  switch (flags.outputFormat) {
    case "text":
      if (result.is_error) io.err(`${result.result ?? result.errors?.join("\n") ?? "Execution error"}\n`)
      else io.out(`${result.result ?? ""}\n`)
      break
    case "json":
      io.out(JSON.stringify(flags.verbose ? messages : result) + "\n")
      break
    case "stream-json":
      break
  }
  return result.is_error ? 1 : 0
}


/**
 * Runs a session over `stream-json` input (`--input-format stream-json`): each user message in
 * `lines` is submitted to the session's runtime as it arrives (`SessionRuntime`: it runs now if no
 * turn runs, else it waits its turn, by its `priority`: `now` stops the running turn), and every
 * turn's messages are printed as `stream-json` lines in the order the turns run, each turn's
 * `result` last. A malformed line is answered in its place in that order, with an error result.
 * Returns the exit code at the end of input: 1 when the last result was an error, else 0.
 *
 * @category Running
 */
export const runStreamInput = async (flags: Flags, lines: AsyncIterable<string>, io: Io): Promise<number> => {
  const asking = flags.permissionPromptTool === "stdio"
  const write = (message: unknown) => io.out(JSON.stringify(message) + "\n")
  // The host's callback hooks (registered by its `initialize`) ask it over the control protocol.
  const hostHooks = HostHooks.make(write, Ids.crypto.uuid)
  const program = (options: Runtime.Options, host: HostStartup.Started) => Effect.gen(function*() {
    const { session, warnings, transcriptWarnings } = yield* Runtime.openSession(options)
    const ids = yield* Ids.Ids
    const actions = yield* Actions.Actions
    for (const warning of [...warnings, ...transcriptWarnings]) io.err(`keel: ${warning}\n`)
    // The runtime in a scope of its own: closed at the end of input once it is idle, which ends the
    // printer's stream of turns after the last one.
    const runtimeScope = yield* Scope.make()
    const runtime = yield* SessionRuntime.make(session).pipe(Scope.extend(runtimeScope))
    // Every turn printed whole, in the order the turns run; the last result decides the exit code.
    let last: SdkMessage.Result | undefined
    const printer = yield* Effect.fork(Stream.runForEach(
      yield* runtime.turns,
      (turn) =>
        runTurn(flags, io, Stream.catchAll(turn.events, () => Stream.empty), []).pipe(
          Effect.map((result) => (last = result ?? last))
        )
    ))
    // With `--permission-prompt-tool stdio`, what waits for an answer goes out as control requests
    // (those pending from before a restart first), and the host's control responses answer it.
    if (asking) {
      yield* Effect.forkScoped(Stream.runForEach(
        yield* actions.subscribe,
        (event) => Effect.sync(() => event.event !== "resolved" && write(ControlMessages.lineFor(event)))
      ))
    }
    // What the transcript left (a turn cut while it waited, queued input) runs before new input.
    yield* runtime.resume
    // An `initialize` whose options Keel cannot honour: nothing more is read or run (exit 2).
    const refusedInit = yield* Deferred.make<void>()
    // The hosts' uuids of the user messages that wait, by turn id (an interrupt's receipt lists them).
    const uuids = new Map<string, string>()
    const hostContext: HostRequests.Context = {
      session,
      runtime,
      commands: (yield* Commands.Commands).commands,
      mcpServers: yield* McpServers.McpServers,
      permissions: yield* Permissions.Permissions,
      agents: (yield* Agents.Agents).info,
      initializedAhead: host.initializeId,
      uuids,
      hostHooks,
      write,
      err: io.err,
      firstInitialize: host.initializeId,
      jsonSchema: flags.jsonSchema
    }
    // A host's control request, unless the host cancelled it; a refused `initialize` stops the input.
    const control = (item: Extract<InputLine, { _tag: "Control" }>) =>
      HostAnswers.answer(item, hostContext, host.inFlight).pipe(
        Effect.flatMap((outcome) => outcome === "refused-init" ? Deferred.succeed(refusedInit, undefined) : Effect.void)
      )
    // A malformed line's answer: its error result, with the totals of the result before it in run
    // order (the runtime's, not the printer's, which may not have printed it yet).
    const rejected = (item: Extract<InputLine, { _tag: "Malformed" }>) =>
      runtime.submitReply(
        item.error,
        Effect.gen(function*() {
          io.err(`keel: ${item.error}\n`)
          return [lineErrorResult(item.error, yield* session.sessionId, yield* runtime.lastResult, ids.uuid)]
        })
      )
    // A host's answer to a control request: the pending action's answer (an error refuses it).
    const answer = (item: Extract<InputLine, { _tag: "Response" }>) =>
      Effect.gen(function*() {
        const { response } = item
        if (yield* hostHooks.take(response)) return
        const action = (yield* actions.pending).find((a) => a.id === response.requestId)
        const given = response._tag === "Answer" || action === undefined
          ? (response._tag === "Answer" ? response.answer : undefined)
          : ControlMessages.refusal(action.request, response.error)
        yield* actions.respond(response.requestId, given)
      }).pipe(Effect.catchAll((error) =>
        Effect.sync(() => io.err(`keel: stdin line ${item.line}: the control response was not used: ${error.message}\n`))
      ))
    // A line that finds the queue full is dropped, and stderr says so; reading goes on.
    const refusedWhenFull = (line: number, admit: Effect.Effect<unknown, SessionRuntime.QueueFull>) =>
      Effect.catchTag(admit, "QueueFull", (full) =>
        Effect.sync(() => io.err(`keel: stdin line ${line} was dropped: ${full.message}\n`)))
    const reader = yield* host.input.lines.pipe(
      Stream.interruptWhen(Deferred.await(refusedInit)),
      Stream.runForEach(({ line, text }) =>
        Effect.suspend(() => {
          const item = parseLine(text, line)
          if (item === undefined) return Effect.void
          switch (item._tag) {
            case "Prompt":
              return refusedWhenFull(
                item.line,
                Effect.map(runtime.submit(item.prompt, { priority: item.priority }), (submitted) => {
                  if (item.uuid !== undefined) uuids.set(submitted.turnId, item.uuid)
                })
              )
            case "Response":
              return answer(item)
            case "Malformed":
              return refusedWhenFull(item.line, rejected(item))
            case "Control":
              return control(item)
            case "Ignored":
              return Effect.sync(() =>
                io.err(`keel: stdin line ${item.line}: ignored a message of type "${item.type}" (only user messages start turns)\n`)
              )
          }
        })
      ),
      Effect.catchAll((e) => Effect.sync(() => io.err(`keel: reading stdin failed: ${e instanceof Error ? e.message : String(e)}\n`))),
      Effect.fork
    )
    io.onInterruptReady?.(() => {
      // Stop reading, drop what waits, stop the running turn: its result is the last output.
      Effect.runFork(Effect.all([Fiber.interrupt(reader), runtime.clear, runtime.interrupt], { discard: true }))
    })
    yield* Fiber.await(reader)
    if (yield* Deferred.isDone(refusedInit)) {
      yield* Effect.all([runtime.clear, runtime.interrupt], { discard: true })
      yield* Scope.close(runtimeScope, Exit.void)
      yield* Fiber.await(printer)
      return "refused" as const
    }
    // At the end of input nothing can answer an action any more: stop once one waits (it stays
    // pending in the transcript, for `--resume` to take up), else when all input has run.
    const answerless = Effect.scoped(Effect.flatMap(actions.subscribe, (events) =>
      Stream.runHead(Stream.filter(events, (e) => e.event === "opened"))))
    const stuck = yield* Effect.raceFirst(Effect.as(runtime.idle, false), Effect.as(answerless, true))
    if (stuck) {
      io.err(
        `keel: input ended while ${(yield* actions.pending).length} action(s) waited for an answer; they stay pending in ` +
          `the session: resume it (--resume ${yield* session.sessionId}) to answer them\n`
      )
    }
    yield* Scope.close(runtimeScope, Exit.void)
    yield* Fiber.await(printer)
    return last
  })

  const exit = await Effect.runPromiseExit(Effect.scoped(Effect.gen(function*() {
    // The input is read from now on; the first line may name the host's in-process MCP servers.
    const host = yield* HostStartup.start(lines, write, io.err, HostStartup.waitsForFirstLine(flags))
    // A first-line `initialize` shapes the session before it opens (its system prompt, its servers).
    const prompt = host.initialize === undefined ? undefined : Initialize.promptOptions(host.initialize)
    const conflict = InitializeAgents.conflict(host.initialize, flags)
    if (conflict !== undefined) {
      io.err(`keel: ${conflict}\n`)
      return "refused" as const
    }
    const options: Runtime.Options = {
      ...flags,
      cwd: process.cwd(),
      askThroughActions: asking,
      sdkMcpServers: host.mcp,
      initialize: host.initialize,
      hostHooks,
      onHookEvent: hookEvents(flags, io.out),
      ...InitializeAgents.runOptions(host.initialize),
      systemPrompt: prompt?.systemPrompt ?? flags.systemPrompt,
      appendSystemPrompt: [flags.appendSystemPrompt, prompt?.appendSystemPrompt].filter((p) => p !== undefined).join("\n\n") ||
        undefined
    }
    const built = yield* HostStartup.build(host, Runtime.layer(options), write, io.err)
    return built === undefined ? ("cancelled" as const) : yield* Effect.provide(program(options, host), built)
  })))
  if (Exit.isFailure(exit)) return failed(exit.cause, flags, io)
  if (exit.value === "refused") return 2
  if (exit.value === "cancelled") return 1
  return exit.value?.is_error === true ? 1 : 0
}
