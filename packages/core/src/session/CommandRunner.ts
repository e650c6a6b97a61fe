/**
 * A slash command in a session: the `Commands` service's command runs, and the session does what
 * it answered: a reply (`system`/`local_command_output` and a result, nothing sent to the model), a
 * model turn with the command's prompt, a compaction now, or a new session (`/clear`). An unknown
 * command is an error result, and nothing goes to the model.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import { Hooks } from "../hook/Hooks.js"
import * as SessionHooks from "../hook/SessionHooks.js"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { CommandResult } from "../input/Commands.js"
import * as SlashCommand from "../input/SlashCommand.js"
import {
  cleared,
  commandContext,
  costOf,
  type Current,
  type Engine,
  opening,
  stampOf,
  transcriptPathOf,
  unpricedWarnings,
  warnings
} from "./Engine.js"
import type { RequestShape, StageContext, StageResult } from "../turn/Stage.js"
import type * as SdkMessage from "./SdkMessage.js"
import * as SdkProjection from "./SdkProjection.js"
import * as SdkResult from "./SdkResult.js"
import type { SubmitOptions } from "./SessionOptions.js"
import * as TurnRunner from "./TurnRunner.js"

/** The stream of a step taken under the session's turn lock, from its start time. */
const locked = (
  engine: Engine,
  f: (startedAt: number) => Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>>
): Stream.Stream<SdkMessage.SdkMessage> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    yield* Effect.acquireRelease(engine.turnLock.take(1), () => engine.turnLock.release(1))
    return Stream.fromIterable(yield* f(yield* Clock.currentTimeMillis))
  }))

/** The totals a command's result reports, now. */
const totals = (engine: Engine, current: Current, startedAt: number, apiBefore: number, denials = true) =>
  Effect.gen(function*() {
    const cost = yield* costOf(engine, current)
    return {
      durationMs: (yield* Clock.currentTimeMillis) - startedAt,
      apiDurationMs: (yield* Ref.get(current.state.apiDurationMs)) - apiBefore,
      modelUsage: cost.modelUsage,
      totalCostUsd: cost.totalCostUsd,
      permissionDenials: denials ? yield* Ref.get(current.state.permissionDenials) : []
    }
  })

/** A command's text answer: `system`/`local_command_output` (unless an error) and a result. */
const replyWith = (engine: Engine, text: string, isError: boolean) =>
  locked(engine, (startedAt) =>
    Effect.gen(function*() {
      const { current, messages: out } = yield* opening(engine)
      const stamp = stampOf(engine, current)
      if (!isError) out.push(SdkProjection.commandOutput(text, stamp))
      out.push(...(yield* unpricedWarnings(engine, current)))
      const apiBefore = yield* Ref.get(current.state.apiDurationMs)
      out.push(SdkResult.commandResult(
        { text, isError, terminalReason: "completed" },
        yield* totals(engine, current, startedAt, apiBefore),
        stamp
      ))
      return out
    }))

/**
 * What `/compact` tells the compactor: the request the session's next turn would make (the same
 * system prompt, tools, thinking and parameters), so the summary request reads the cached prefix.
 */
const manualContext = (engine: Engine, current: Current) =>
  Effect.gen(function*() {
    const model = yield* Ref.get(engine.model)
    const prompt = (yield* current.prompt).resolved.request
    const thinking = yield* Ref.get(engine.thinking)
    const request: RequestShape = {
      model,
      max_tokens: engine.maxTokens(model),
      tools: engine.registry.definitions,
      ...prompt,
      ...(engine.options.params !== undefined ? { params: engine.options.params } : {}),
      thinking
    }
    return {
      model,
      iteration: 0,
      sessionId: current.id,
      maxTokens: engine.maxTokens(model),
      system: prompt.system,
      cwd: engine.options.cwd,
      tools: engine.registry.definitions,
      resultLimit: (name: string) => engine.registry.get(name)?.maxResultChars,
      request,
      transcriptPath: transcriptPathOf(engine, current)
    } satisfies StageContext
  })

/** `/compact [instructions]`: compaction now, its status and boundary, and a result; no model turn. */
const compactNow = (engine: Engine, instructions: string | undefined) =>
  Stream.unwrapScoped(Effect.gen(function*() {
    yield* Effect.acquireRelease(engine.turnLock.take(1), () => engine.turnLock.release(1))
    const startedAt = yield* Clock.currentTimeMillis
    const { current, messages: prefix } = yield* opening(engine)
    const { recorder, state } = current
    const stamp = stampOf(engine, current)
    const apiBefore = yield* Ref.get(state.apiDurationMs)
    const work = Effect.gen(function*() {
      const history = yield* Ref.get(state.messages)
      const outcome: StageResult = !engine.compactor.available
        ? { messages: history, halt: "Compaction is not available in this session" }
        : history.length === 0
        ? { messages: history, halt: "There is nothing to compact yet" }
        : yield* Effect.zipRight(
          SessionHooks.preCompact(Context.get(engine.services, Hooks), { sessionId: current.id, cwd: engine.options.cwd }, "manual", instructions),
          engine.compactor.manual(history, yield* manualContext(engine, current), instructions)
        )
      if (outcome.halt === undefined) {
        yield* Ref.set(state.messages, outcome.messages)
        recorder.note({ stage: "compact", report: outcome.report ?? "compacted", compaction: outcome.compaction })
        yield* Effect.logDebug("compacted the conversation on /compact")
      }
      const out = warnings(engine, current, yield* recorder.checkpoint({ sync: true }))
      // The compacting status closes (with how it went) before the boundary, as Claude Code orders them.
      out.push(SdkProjection.compactResult(
        outcome.halt === undefined ? undefined : outcome.compactionError ?? outcome.halt,
        stamp
      ))
      if (outcome.compaction !== undefined) out.push(SdkProjection.compactBoundary(outcome.compaction, stamp))
      out.push(...(yield* unpricedWarnings(engine, current)))
      out.push(SdkResult.commandResult(
        {
          text: outcome.halt ?? `Compacted the conversation (${outcome.report})`,
          isError: outcome.halt !== undefined,
          terminalReason: outcome.halt === undefined ? "completed" : "prompt_too_long"
        },
        yield* totals(engine, current, startedAt, apiBefore),
        stamp
      ))
      return out
    })
    return Stream.concat(
      Stream.fromIterable([...prefix, SdkProjection.status("compacting", stamp)]),
      Stream.fromIterableEffect(work)
    )
  }))

/**
 * `/clear`: a new session in this one (see `Engine.cleared`); its `system`/`init`, then a result
 * saying so. Nothing goes to the model; the old transcript stays as it was.
 */
const clearNow = (engine: Engine) =>
  locked(engine, (startedAt) =>
    Effect.gen(function*() {
      const previous = yield* Ref.get(engine.current)
      const flushed = yield* previous.recorder.checkpoint({ sync: true })
      const current = yield* cleared(engine, previous)
      yield* Ref.set(engine.current, current)
      const started = yield* current.recorder.checkpoint({ sync: true })
      const text = `Started a new session, ${current.id}, with an empty conversation. ` +
        `The previous one (${previous.id}) is kept as it was: resume it with --resume ${previous.id}.`
      return [
        current.init,
        ...warnings(engine, current, [...flushed, ...started]),
        SdkResult.commandResult(
          { text, isError: false, terminalReason: "completed" },
          yield* totals(engine, current, startedAt, 0, false),
          stampOf(engine, current)
        )
      ]
    }))

/**
 * Runs `/name args` in the session `engine` holds and streams its messages; the last is a result.
 *
 * @category Running
 */
export const run = (
  engine: Engine,
  invocation: SlashCommand.Invocation,
  options: SubmitOptions = {}
): Stream.Stream<SdkMessage.SdkMessage> => {
  const command = engine.commands.find(invocation.name)
  if (command === undefined) return replyWith(engine, SlashCommand.unknown(invocation.name, engine.commands.commands), true)
  return Stream.unwrap(Effect.gen(function*() {
    const current = yield* Ref.get(engine.current)
    const answer = yield* engine.turnLock.withPermits(1)(command.run(invocation.args, commandContext(engine, current)))
    return CommandResult.$match(answer, {
      Reply: ({ isError, text }) => replyWith(engine, text, isError),
      Prompt: ({ model, prompt }) =>
        TurnRunner.run(engine, prompt, {
          signal: options.signal,
          model,
          turnId: options.turnId,
          metadata: options.metadata,
          command: { name: invocation.name, args: invocation.args }
        }),
      Compact: ({ instructions }) => compactNow(engine, instructions),
      Clear: () => clearNow(engine)
    })
  }).pipe(Effect.withSpan("keel.command", {
    captureStackTrace: false,
    attributes: { "keel.command": invocation.name }
  })))
}
