/**
 * Runs the tool calls of one assistant message. Each call: look the tool up, decode its input with
 * the tool's Schema, call it. Unknown tools, invalid input, tool failures and tool crashes all become
 * `is_error` tool_results with a message the model can act on; only interruption stops the run.
 * Consecutive concurrency-safe calls run in parallel (up to `maxConcurrency`), the others alone;
 * results come out in `tool_use` order.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Permissions } from "../permission/Permissions.js"
import { SessionState } from "../session/SessionState.js"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { ToolResultBlock, type ToolUseBlock } from "../message/Message.js"
import type { Any, ToolOutput } from "./Tool.js"
import { ToolRegistry } from "./ToolRegistry.js"

/** One call to run. @category Models */
export interface ToolCall {
  readonly block: ToolUseBlock
  /** The raw text when the streamed input was not valid JSON. */
  readonly malformedInput?: string | undefined
}

/** @category Models */
export interface Service {
  /** Runs the calls; emits one result per call, in call order. */
  readonly run: (calls: ReadonlyArray<ToolCall>, cwd: string) => Stream.Stream<ToolResultBlock>
}

/** @category Context */
export class ToolRuntime extends Context.Tag("@keel/core/ToolRuntime")<ToolRuntime, Service>() {}

/** Options of the runtime. @category Models */
export interface Options {
  /** Most concurrency-safe calls in flight at once (default 10, as Claude Code; `KEEL_MAX_TOOL_USE_CONCURRENCY`). */
  readonly maxConcurrency?: number
}

/** `KEEL_MAX_TOOL_USE_CONCURRENCY` (default 10, 1 to 100). @category Configuration */
export const maxConcurrencyConfig: Config.Config<number> = Config.integer("KEEL_MAX_TOOL_USE_CONCURRENCY").pipe(
  Config.validate({ message: "must be a whole number from 1 to 100", validation: (n) => n >= 1 && n <= 100 }),
  Config.withDefault(10)
)

/** An `is_error` result, wrapped as Claude Code wraps them so models read it as a tool error. @category Constructors */
export const errorResult = (toolUseId: string, message: string): ToolResultBlock =>
  new ToolResultBlock({ tool_use_id: toolUseId, content: `<tool_use_error>${message}</tool_use_error>`, is_error: true })

/** The result given to a call that was interrupted before it finished. @category Constructors */
export const interruptedResult = (toolUseId: string): ToolResultBlock =>
  errorResult(toolUseId, "Interrupted by user")

const successResult = (tool: Any, toolUseId: string, output: ToolOutput): ToolResultBlock =>
  new ToolResultBlock({
    tool_use_id: toolUseId,
    content: typeof output === "string"
      ? (output.length === 0 ? `(${tool.name} completed with no output)` : output)
      : output.length === 0
      ? `(${tool.name} completed with no output)`
      : output
  })

interface Planned {
  readonly call: ToolCall
  readonly tool: Any | undefined
  readonly input: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }
  readonly safe: boolean
}

/** Records a denied call in the session's permission denials (when the call runs inside a session). */
const recordDenial = (toolName: string, toolUseId: string, input: unknown) =>
  Effect.flatMap(Effect.serviceOption(SessionState), (state) =>
    state._tag === "None"
      ? Effect.void
      : Ref.update(state.value.permissionDenials, (ds) => [...ds, { tool_name: toolName, tool_use_id: toolUseId, tool_input: input }]))

/**
 * Builds the runtime over a registry. With `permissions`, every call is checked before it runs: a
 * denied call gets an error result saying why, and is recorded in the session's permission denials.
 *
 * @category Constructors
 */
export const make = (registry: ToolRegistry["Type"], options: Options = {}, permissions?: Permissions["Type"]): Service => {
  const maxConcurrency = options.maxConcurrency ?? 10
  // One decoder per tool, built once: building a decoder walks the schema.
  const decoders = new Map(
    registry.tools.map((tool) => [tool, Schema.decodeUnknownEither(tool.input, { errors: "all", onExcessProperty: "ignore" })])
  )

  const plan = (call: ToolCall): Planned => {
    const tool = registry.get(call.block.name)
    if (tool === undefined) {
      const available = registry.tools.map((t) => t.name).join(", ")
      return {
        call,
        tool,
        input: {
          ok: false,
          message: `Error: No such tool available: ${call.block.name}. The available tools are: ${available || "none"}.`
        },
        safe: true
      }
    }
    if (call.malformedInput !== undefined) {
      return {
        call,
        tool,
        input: { ok: false, message: `InputValidationError: the input was not valid JSON: ${call.malformedInput.slice(0, 200)}` },
        safe: true
      }
    }
    const decoded = decoders.get(tool)!(call.block.input)
    if (decoded._tag === "Left") {
      return {
        call,
        tool,
        input: {
          ok: false,
          message: `InputValidationError: ${tool.name} failed due to the following issues:\n` +
            ParseResult.TreeFormatter.formatErrorSync(decoded.left)
        },
        safe: true
      }
    }
    let safe = false
    try {
      safe = tool.isConcurrencySafe(decoded.right)
    } catch {
      safe = false
    }
    return { call, tool, input: { ok: true, value: decoded.right }, safe }
  }

  const execute = (p: Planned, cwd: string): Effect.Effect<ToolResultBlock> => {
    const id = p.call.block.id
    if (!p.input.ok || p.tool === undefined) {
      return Effect.succeed(errorResult(id, p.input.ok ? "Error: No such tool" : p.input.message))
    }
    const tool = p.tool
    const decoded = p.input.value
    const checked: Effect.Effect<{ readonly input: unknown } | { readonly denied: string }> = permissions === undefined
      ? Effect.succeed({ input: decoded })
      : Effect.flatMap(
        permissions.check({
          toolName: tool.name,
          input: p.call.block.input,
          isReadOnly: safely(() => tool.isReadOnly(decoded)),
          toolUseId: id,
          cwd
        }),
        (decision): Effect.Effect<{ readonly input: unknown } | { readonly denied: string }> => {
          if (decision._tag === "Deny") {
            return Effect.as(recordDenial(tool.name, id, p.call.block.input), { denied: decision.message })
          }
          if (decision.updatedInput === undefined) return Effect.succeed({ input: decoded })
          const redecoded = decoders.get(tool)!(decision.updatedInput)
          return Effect.succeed(
            redecoded._tag === "Right"
              ? { input: redecoded.right }
              : { denied: `The permission callback changed the input of ${tool.name} into an invalid one` }
          )
        }
      )
    return Effect.flatMap(checked, (c) =>
      "denied" in c
        ? Effect.succeed(errorResult(id, c.denied))
        : Effect.suspend(() => tool.call(c.input, { toolUseId: id, cwd })).pipe(
      Effect.map((output) => successResult(tool, id, output)),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause as Cause.Cause<never>)
          : Effect.succeed(errorResult(
            id,
            Cause.failureOption(cause).pipe((o) =>
              o._tag === "Some" ? o.value.message : `${tool.name} crashed: ${Cause.pretty(cause).split("\n")[0]}`
            )
          ))
      )
    ))
  }

  return ToolRuntime.of({
    run: (calls, cwd) => {
      const groups: Array<{ safe: boolean; items: Array<Planned> }> = []
      for (const planned of calls.map(plan)) {
        const last = groups[groups.length - 1]
        if (last !== undefined && last.safe && planned.safe) last.items.push(planned)
        else groups.push({ safe: planned.safe, items: [planned] })
      }
      return Stream.fromIterable(groups).pipe(
        Stream.flatMap((group) =>
          Stream.fromIterable(group.items).pipe(
            Stream.mapEffect((p) => execute(p, cwd), { concurrency: group.safe ? maxConcurrency : 1 })
          )
        )
      )
    }
  })
}

const safely = (f: () => boolean): boolean => {
  try {
    return f()
  } catch {
    return false
  }
}

/**
 * The runtime layer over the session's `ToolRegistry`, checking calls with the `Permissions`
 * service when one is provided (without one, every call runs).
 *
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<ToolRuntime, never, ToolRegistry> =>
  Layer.effect(
    ToolRuntime,
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const permissions = yield* Effect.serviceOption(Permissions)
      return make(registry, options, Option.getOrUndefined(permissions))
    })
  )

/** The runtime layer with its concurrency from `KEEL_MAX_TOOL_USE_CONCURRENCY`. @category Layers */
export const layerConfig: Layer.Layer<ToolRuntime, import("effect/ConfigError").ConfigError, ToolRegistry> = Layer
  .unwrapEffect(Effect.map(maxConcurrencyConfig, (maxConcurrency) => layer({ maxConcurrency })))
