/**
 * Runs the tool calls of an assistant message. Each call: look the tool up, decode its input with
 * the tool's Schema, check permissions, call it. Unknown tools, invalid input, denials, tool failures
 * and tool crashes all become `is_error` tool_results with a message the model can act on; only
 * interruption stops a call. Calls are scheduled by `ToolScheduler`: each starts as soon as it is
 * added (the turn loop adds calls while the model is still streaming), concurrency-safe calls run
 * together (up to `maxConcurrency`), the others alone, and results come out in `tool_use` order.
 *
 * Every call is checked by the `Permissions` service first: the runtime requires one, so running
 * without checks is an explicit choice (`Permissions.layerAllowAll`), never a service left out.
 * Each call is a `keel.tool` span (its name, id and outcome).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Clock from "effect/Clock"
import * as ToolHooks from "../hook/ToolHooks.js"
import * as BashGrammar from "../permission/BashGrammar.js"
import { type RecordingCheck, recordDenial, recordingDenials } from "../permission/DenialRecording.js"
import { Permissions } from "../permission/Permissions.js"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ToolResultBlock, type ToolUseBlock } from "../message/Message.js"
import { type Any, type CallResult, outputOf, type Services, structuredOf, type ToolError } from "./Tool.js"
import type { ToolEvent } from "./ToolEvent.js"
import { ToolRegistry } from "./ToolRegistry.js"
import * as ToolScheduler from "./ToolScheduler.js"
import * as ToolTimeout from "./ToolTimeout.js"

/** One call to run. @category Models */
export interface ToolCall {
  readonly block: ToolUseBlock
  /** The raw text when the streamed input was not valid JSON. */
  readonly malformedInput?: string | undefined
}

/**
 * The calls of one assistant message, as they are added: see `ToolScheduler.Scheduler`.
 *
 * @category Models
 */
export interface Executor extends Omit<ToolScheduler.Scheduler, "add"> {
  /** Plans the call (tool lookup, input decoding) and queues it; it starts as soon as the scheduling rule allows. */
  readonly add: (call: ToolCall) => void
}

/** @category Models */
export interface Service {
  /** An executor for calls added one by one, its calls running in the current scope (with the turn's services). */
  readonly start: (cwd: string) => Effect.Effect<Executor, never, Scope.Scope | Services>
  /** Runs these calls: progress and reports as they happen, one result per call in call order. */
  readonly run: (calls: ReadonlyArray<ToolCall>, cwd: string) => Stream.Stream<ToolScheduler.Event, never, Services>
}

/** @category Context */
export class ToolRuntime extends Context.Tag("@keel/core/ToolRuntime")<ToolRuntime, Service>() {}

/** Options of the runtime. @category Models */
export interface Options {
  /** Most concurrency-safe calls in flight at once (default 10, as Claude Code; `KEEL_MAX_TOOL_USE_CONCURRENCY`). */
  readonly maxConcurrency?: number
  /** Time between `tool_progress` ticks of a running call (default 1 s). */
  readonly progressInterval?: import("effect/Duration").DurationInput
}

/** `KEEL_MAX_TOOL_USE_CONCURRENCY` (default 10, 1 to 100). @category Configuration */
export const maxConcurrencyConfig: Config.Config<number> = Config.integer("KEEL_MAX_TOOL_USE_CONCURRENCY").pipe(
  Config.validate({ message: "must be a whole number from 1 to 100", validation: (n) => n >= 1 && n <= 100 }),
  Config.withDefault(10)
)

/**
 * An `is_error` result, wrapped as Claude Code wraps them so models read it as a tool error. Built
 * unchecked: every field is a string the kernel made (a Schema check here cost more than the call).
 *
 * @category Constructors
 */
export const errorResult = (toolUseId: string, message: string): ToolResultBlock =>
  new ToolResultBlock({
    tool_use_id: toolUseId,
    content: `<tool_use_error>${message}</tool_use_error>`,
    is_error: true,
    // Hosts get the message as Claude Code gives it: `Error: ...`.
    toolUseResult: message.startsWith("Error: ") ? message : `Error: ${message}`
  }, true)

/** The result given to a call cancelled because a sibling call failed (Claude Code's wording). @category Constructors */
export const cancelledResult = (toolUseId: string, failed: string): ToolResultBlock =>
  errorResult(toolUseId, `Cancelled: parallel tool call ${failed} errored`)

/** The result given to a call that was interrupted before it finished. @category Constructors */
export const interruptedResult = (toolUseId: string): ToolResultBlock =>
  errorResult(toolUseId, "Interrupted by user")

/**
 * A finished call's result block, as the model sees it (checked only when the tool gave content
 * blocks: a string needs no check).
 *
 * @category Constructors
 */
export const successResult = (tool: Pick<Any, "name">, toolUseId: string, result: CallResult): ToolResultBlock => {
  const output = outputOf(result)
  const structured = structuredOf(result)
  return new ToolResultBlock({
    tool_use_id: toolUseId,
    content: output.length === 0 ? `(${tool.name} completed with no output)` : output,
    ...(structured === undefined ? {} : { toolUseResult: structured })
  }, typeof output === "string")
}

interface Planned {
  readonly call: ToolCall
  readonly tool: Any | undefined
  readonly input: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }
  readonly safe: boolean
}

/** One decoder per tool of a registry: building a decoder walks the schema, so it is done once. */
type Decoders = ReadonlyMap<Any, (input: unknown) => Either.Either<unknown, ParseResult.ParseError>>

const decodersOf = (registry: ToolRegistry["Type"]): Decoders =>
  new Map(
    registry.tools.map((tool) => [tool, Schema.decodeUnknownEither(tool.input, { errors: "all", onExcessProperty: "ignore" })])
  )

/** A call that does not run: its tool is unknown, or its input is not what the tool takes. */
const invalid = (call: ToolCall, tool: Any | undefined, message: string): Planned => ({
  call,
  tool,
  input: { ok: false, message },
  safe: true
})

/** A call looked at before it is scheduled: its tool, its decoded input, whether it may run beside others. */
const plan = (registry: ToolRegistry["Type"], decoders: Decoders, call: ToolCall): Planned => {
  const tool = registry.get(call.block.name)
  if (tool === undefined) {
    const available = registry.tools.map((t) => t.name).join(", ")
    return invalid(call, tool, `Error: No such tool available: ${call.block.name}. The available tools are: ${available || "none"}.`)
  }
  if (call.malformedInput !== undefined) {
    return invalid(call, tool, `InputValidationError: the input was not valid JSON: ${call.malformedInput.slice(0, 200)}`)
  }
  const decoded = decoders.get(tool)!(call.block.input)
  if (decoded._tag === "Left") {
    return invalid(
      call,
      tool,
      `InputValidationError: ${tool.name} failed due to the following issues:\n` +
        ParseResult.TreeFormatter.formatErrorSync(decoded.left)
    )
  }
  return { call, tool, input: { ok: true, value: decoded.right }, safe: safely(() => tool.isConcurrencySafe(decoded.right)) }
}

/**
 * The input the call runs with (and the PreToolUse hooks' context for the model), or why it does
 * not run: a PreToolUse hook or the permission check said no, or a hook's new input is invalid.
 */
const checkCall = (
  check: RecordingCheck,
  policy: Permissions["Type"],
  decoders: Decoders,
  tool: Any,
  call: ToolCall,
  decoded: unknown,
  cwd: string
): Effect.Effect<
  { readonly input: unknown; readonly raw: unknown; readonly context: ReadonlyArray<string> } | { readonly denied: string },
  never,
  Services
> =>
  Effect.gen(function*() {
    const pre = yield* ToolHooks.preToolUse({ toolName: tool.name, input: call.block.input, toolUseId: call.block.id, cwd })
    const request = { toolName: tool.name, input: call.block.input, isReadOnly: false, toolUseId: call.block.id, cwd }
    if (pre._tag === "Denied") {
      yield* recordDenial(request)
      return { denied: pre.message }
    }
    let raw: unknown = call.block.input
    let value = decoded
    if (pre.updatedInput !== undefined) {
      const redecoded = decoders.get(tool)!(pre.updatedInput)
      if (redecoded._tag === "Left") {
        return {
          denied: `A PreToolUse hook changed the input of ${tool.name} into an invalid one:\n` +
            ParseResult.TreeFormatter.formatErrorSync(redecoded.left)
        }
      }
      raw = pre.updatedInput
      value = redecoded.right
    }
    const decision = yield* ToolHooks.check(
      policy,
      check,
      { ...request, input: raw, isReadOnly: safely(() => tool.isReadOnly(value)) },
      pre
    )
    if (decision._tag === "Deny") return { denied: decision.message }
    if (decision.updatedInput === undefined) return { input: value, raw, context: pre.context }
    const redecoded = decoders.get(tool)!(decision.updatedInput)
    return redecoded._tag === "Right"
      ? { input: redecoded.right, raw: decision.updatedInput, context: pre.context }
      : { denied: `The permission callback changed the input of ${tool.name} into an invalid one` }
  })

/** How a call ended, for its span and its result. */
const ended = (
  outcome: "ok" | "error" | "denied" | "invalid_input",
  result: ToolResultBlock,
  cancelsSiblings = false
): Effect.Effect<ToolScheduler.Outcome> =>
  Effect.as(Effect.annotateCurrentSpan("keel.tool.outcome", outcome), { result, cancelsSiblings })

/** Checks and runs one planned call; every way it can end is a result (interruption excepted). */
const execute = (
  check: RecordingCheck,
  policy: Permissions["Type"],
  decoders: Decoders,
  p: Planned,
  cwd: string,
  emit: (event: ToolEvent) => Effect.Effect<void>
): Effect.Effect<ToolScheduler.Outcome, never, Services> => {
  const id = p.call.block.id
  if (!p.input.ok || p.tool === undefined) {
    return ended("invalid_input", errorResult(id, p.input.ok ? "Error: No such tool" : p.input.message))
  }
  const tool = p.tool
  return Effect.flatMap(checkCall(check, policy, decoders, tool, p.call, p.input.value, cwd), (c) =>
    "denied" in c
      ? ended("denied", errorResult(id, c.denied))
      : Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
        ToolTimeout.bounded(tool, Effect.suspend(() => tool.call(c.input, { toolUseId: id, cwd, emit }))).pipe(
          Effect.matchCauseEffect({
            onSuccess: (output) =>
              Effect.flatMap(
                ToolHooks.postToolUse({ toolName: tool.name, input: c.raw, toolUseId: id, cwd, output: outputOf(output), startedAt }),
                (after) =>
                  ended("ok", ToolHooks.withContext(ToolHooks.withContext(successResult(tool, id, output), "PreToolUse", c.context), "PostToolUse", after))
              ),
            onFailure: (cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause as Cause.Cause<never>)
                : ended(
                  "error",
                  ToolHooks.withContext(errorResult(id, failureMessage(tool, cause)), "PreToolUse", c.context),
                  tool.cancelsSiblingsOnError === true
                )
          })
        )))
}

/** What a failed call says: its `ToolError`'s message, or that it crashed. */
const failureMessage = (tool: Any, cause: Cause.Cause<ToolError>): string =>
  Cause.failureOption(cause).pipe((o) =>
    o._tag === "Some" ? o.value.message : `${tool.name} crashed: ${Cause.pretty(cause).split("\n")[0]}`
  )

/**
 * Builds the runtime over a registry and a permission policy: every call is checked before it
 * runs; a denied call gets an error result saying why, and is recorded in the session's permission
 * denials (the check is decorated by `DenialRecording.recordingDenials`).
 *
 * @category Constructors
 */
export const make = (registry: ToolRegistry["Type"], policy: Permissions["Type"], options: Options = {}): Service => {
  const check = recordingDenials(policy)
  const decoders = decodersOf(registry)

  const start = (cwd: string): Effect.Effect<Executor, never, Scope.Scope | Services> =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const services = yield* Effect.context<Services>()
      // Bash judges its calls' concurrency on the bash grammar: start loading it (without waiting)
      // when the first round of tools starts, so it is ready by the time the model asks for one.
      if (registry.get("Bash") !== undefined) BashGrammar.preload()
      const scheduler = yield* ToolScheduler.make({
        maxConcurrency: options.maxConcurrency ?? 10,
        progressInterval: options.progressInterval,
        cancelled: cancelledResult
      }, scope)
      return {
        ...scheduler,
        add: (call) => {
          const planned = plan(registry, decoders, call)
          scheduler.add({
            id: call.block.id,
            toolName: call.block.name,
            safe: planned.safe,
            label: labelOf(call.block),
            run: (emit) =>
              execute(check, policy, decoders, planned, cwd, emit).pipe(
                Effect.onInterrupt(() => Effect.annotateCurrentSpan("keel.tool.outcome", "interrupted")),
                Effect.withSpan("keel.tool", {
                  captureStackTrace: false,
                  attributes: { "keel.tool.name": call.block.name, "keel.tool.use_id": call.block.id }
                }),
                Effect.provide(services)
              )
          })
        }
      }
    })

  return ToolRuntime.of({
    start,
    run: (calls, cwd) =>
      Stream.unwrapScoped(Effect.map(start(cwd), (executor) => {
        for (const call of calls) executor.add(call)
        executor.close()
        return executor.events
      }))
  })
}

/** How a failed call is named in its siblings' cancellation: `Bash(npm test)`, the main input cut at 40 characters. */
const labelOf = (block: ToolUseBlock): string => {
  const input = block.input as Record<string, unknown> | null
  const main = input !== null && typeof input === "object" ? Object.values(input).find((v) => typeof v === "string") : undefined
  if (typeof main !== "string") return block.name
  const oneLine = main.replace(/\s+/g, " ").trim()
  return `${block.name}(${oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine})`
}

const safely = (f: () => boolean): boolean => {
  try {
    return f()
  } catch {
    return false
  }
}

/**
 * The runtime layer over the session's `ToolRegistry`, checking every call with the `Permissions`
 * service (`Permissions.layerAllowAll` for none).
 *
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<ToolRuntime, never, ToolRegistry | Permissions> =>
  Layer.effect(
    ToolRuntime,
    Effect.gen(function*() {
      return make(yield* ToolRegistry, yield* Permissions, options)
    })
  )

/** The runtime layer with its concurrency from `KEEL_MAX_TOOL_USE_CONCURRENCY`. @category Layers */
export const layerConfig: Layer.Layer<
  ToolRuntime,
  import("effect/ConfigError").ConfigError,
  ToolRegistry | Permissions
> = Layer
  .unwrapEffect(Effect.map(maxConcurrencyConfig, (maxConcurrency) => layer({ maxConcurrency })))
