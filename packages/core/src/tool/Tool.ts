/**
 * The tool contract: a name, a description, an input Schema (whose JSON Schema goes to the API),
 * read-only and concurrency-safety predicates, and `call`. Tools fail with `ToolError`, which the
 * runtime turns into an `is_error` tool_result the model can act on.
 *
 * A call runs inside its turn, and its requirements say which of the turn's services it uses (its
 * `R`, at most {@link Services}): the session's state for the file tools and TodoWrite, the model,
 * pipeline and permissions for a subagent. They are in the types, so a tool never finds a service
 * missing at run time.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import type { Compactor } from "../context/Compactor.js"
import type { Hooks } from "../hook/Hooks.js"
import type { Ids } from "../ids/Ids.js"
import type { DocumentBlock, ImageBlock, TextBlock } from "../message/Message.js"
import type { ModelClient } from "../model/ModelClient.js"
import type { ToolDefinition } from "../model/ModelRequest.js"
import type { Permissions } from "../permission/Permissions.js"
import type { SessionState } from "../session/SessionState.js"
import type { Pipeline } from "../turn/Pipeline.js"
import type { ToolEvent } from "./ToolEvent.js"
import type { ToolRegistry } from "./ToolRegistry.js"

/** What a tool call knows about its surroundings. @category Models */
export interface ToolContext {
  /** The id of the `tool_use` block being answered. */
  readonly toolUseId: string
  /** The session's working directory; relative paths resolve against it. */
  readonly cwd: string
  /**
   * Reports what the call does while it runs: a subagent's prompt and the events of its turn (the
   * session shows them with `parent_tool_use_id` set to this call's id). Absent outside a turn.
   */
  readonly emit?: ((event: ToolEvent) => Effect.Effect<void>) | undefined
}

/**
 * The services a tool call may use: the ones its turn runs with. The session's state (the files
 * read, the shell's directory, the task list), and what a subagent needs to run a turn of its own.
 *
 * @category Models
 */
export type Services = SessionState | ModelClient | Pipeline | Compactor | ToolRegistry | Permissions | Ids | Hooks

/** What a tool returns: text, or content blocks (images, documents). @category Models */
export type ToolOutput = string | ReadonlyArray<TextBlock | ImageBlock | DocumentBlock>

/**
 * A call's output together with its structured result: what the tool did, as data for hosts and
 * tools rather than text for the model (Claude Code's `toolUseResult`: for Read the file path and
 * line range, for Bash stdout, stderr and the exit code, for Edit the patch). The model sees only
 * `output`; the result rides on the tool_result block (`ToolResultBlock.toolUseResult`), into the
 * transcript and the stream-json `user` message (`tool_use_result`), never to the API. It must be
 * JSON-compatible.
 *
 * @category Models
 */
export interface Structured {
  readonly _tag: "Structured"
  readonly output: ToolOutput
  readonly result: unknown
}

/** What a call returns: its output, or its output with a structured result. @category Models */
export type CallResult = ToolOutput | Structured

/** A call's output with a structured result. @category Constructors */
export const structured = (output: ToolOutput, result: unknown): Structured => ({ _tag: "Structured", output, result })

/** The output the model sees of a call's result. @category Accessors */
export const outputOf = (result: CallResult): ToolOutput => isStructured(result) ? result.output : result

/** The structured result of a call's result, if it has one. @category Accessors */
export const structuredOf = (result: CallResult): unknown => isStructured(result) ? result.result : undefined

const isStructured = (result: CallResult): result is Structured =>
  typeof result === "object" && !Array.isArray(result) && (result as Structured)._tag === "Structured"

/** A failure the model should read and act on ("file not found", "not a text file"). @category Errors */
export class ToolError extends Schema.TaggedError<ToolError>("@keel/Tool/ToolError")("ToolError", {
  message: Schema.String
}) {}

/** A tool taking input of type `I`, whose calls use the services `R` (some of {@link Services}). @category Models */
export interface Tool<in out I = any, out R = never> {
  readonly name: string
  readonly description: string
  /** Decodes the model's raw input. Its JSON Schema is the `input_schema` sent to the API. */
  readonly input: Schema.Schema<I, any>
  /**
   * The `input_schema` sent to the API as is, instead of `input`'s JSON Schema: for tools described
   * in JSON Schema already (MCP tools), whose input the tool's owner validates.
   */
  readonly inputSchema?: ToolDefinition["input_schema"] | undefined
  /** Whether this call only reads (permissions use it). */
  readonly isReadOnly: (input: I) => boolean
  /** Whether this call may run in parallel with other concurrency-safe calls. */
  readonly isConcurrencySafe: (input: I) => boolean
  /**
   * Whether running this call a second time repeats nothing the first run did: a call a crash cut
   * short runs again when its turn is resumed (`DurableTurn`) only if so; any other is answered
   * as cut short. Absent: `isReadOnly`.
   */
  readonly isIdempotent?: ((input: I) => boolean) | undefined
  /**
   * Whether a failure of this tool cancels the calls running beside it in the same message (Claude
   * Code does this for Bash only: a failed command usually means its siblings' work is moot).
   */
  readonly cancelsSiblingsOnError?: boolean | undefined
  /**
   * The longest result (in characters) the model sees in place; a longer one is saved to a file by
   * the tool result budget (`ToolResultBudget`), whose own threshold caps this one. `Infinity`: never
   * saved, because the tool bounds its output itself (Read). Absent: the budget's threshold.
   */
  readonly maxResultChars?: number | undefined
  /**
   * This tool's default timeout of one call, in ms (`ToolTimeout`); `Infinity`: the tool bounds its
   * calls itself. Absent: `KEEL_TOOL_TIMEOUT_MS`, else `ToolTimeout.DEFAULT_TIMEOUT_MS`.
   */
  readonly timeoutMs?: number | undefined
  readonly call: (input: I, context: ToolContext) => Effect.Effect<CallResult, ToolError, R>
}

/** A tool of any input, using any of the turn's services: what a registry holds. @category Models */
export type Any = Tool<any, Services>

/** Options for {@link make}. @category Constructors */
export interface MakeOptions<S extends Schema.Schema<any, any>, R> {
  readonly name: string
  readonly description: string
  readonly input: S
  /** See {@link Tool.inputSchema}. */
  readonly inputSchema?: ToolDefinition["input_schema"] | undefined
  readonly isReadOnly: boolean | ((input: S["Type"]) => boolean)
  readonly isConcurrencySafe?: boolean | ((input: S["Type"]) => boolean)
  /** See {@link Tool.isIdempotent}. */
  readonly isIdempotent?: boolean | ((input: S["Type"]) => boolean)
  readonly cancelsSiblingsOnError?: boolean
  /** See {@link Tool.maxResultChars}. */
  readonly maxResultChars?: number | undefined
  /** See {@link Tool.timeoutMs}. */
  readonly timeoutMs?: number | undefined
  readonly call: (input: S["Type"], context: ToolContext) => Effect.Effect<CallResult, ToolError, R>
}

/**
 * Defines a tool. `isConcurrencySafe` and `isIdempotent` default to `isReadOnly`.
 *
 * @category Constructors
 */
export const make = <S extends Schema.Schema<any, any>, R extends Services = never>(
  options: MakeOptions<S, R>
): Tool<S["Type"], R> => {
  const predicate = (p: boolean | ((input: S["Type"]) => boolean)) => typeof p === "function" ? p : () => p
  const isReadOnly = predicate(options.isReadOnly)
  return {
    name: options.name,
    description: options.description,
    input: options.input,
    ...(options.inputSchema === undefined ? {} : { inputSchema: options.inputSchema }),
    isReadOnly,
    isConcurrencySafe: options.isConcurrencySafe === undefined ? isReadOnly : predicate(options.isConcurrencySafe),
    ...(options.isIdempotent === undefined ? {} : { isIdempotent: predicate(options.isIdempotent) }),
    cancelsSiblingsOnError: options.cancelsSiblingsOnError === true,
    ...(options.maxResultChars === undefined ? {} : { maxResultChars: options.maxResultChars }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    call: options.call
  }
}

type Json = { readonly [key: string]: unknown }

/**
 * Inlines `$ref`s into `$defs` (Effect names refined schemas such as `Int`), so the model sees each
 * field's whole schema in place. A recursive definition keeps its `$ref`, and `$defs` stays for it.
 */
const inlineRefs = (root: Json): Json => {
  const defs = (root.$defs ?? {}) as Record<string, Json>
  let keptRefs = false
  const visit = (node: unknown, stack: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n, stack))
    if (node === null || typeof node !== "object") return node
    const { $ref, ...rest } = node as Json
    const out: Record<string, unknown> = {}
    if (typeof $ref === "string" && $ref.startsWith("#/$defs/")) {
      const name = $ref.slice("#/$defs/".length)
      if (stack.has(name) || defs[name] === undefined) {
        keptRefs = true
        out.$ref = $ref
      } else {
        const { title: _, ...def } = visit(defs[name], new Set([...stack, name])) as Json
        Object.assign(out, def)
      }
    } else if ($ref !== undefined) out.$ref = $ref
    for (const [key, value] of Object.entries(rest)) {
      if (key === "$defs" || (key === "title" && typeof value === "string")) continue
      out[key] = key === "properties"
        ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, visit(v, stack)]))
        : visit(value, stack)
    }
    return out
  }
  const inlined = visit(root, new Set()) as Record<string, unknown>
  if (keptRefs) inlined.$defs = defs
  return inlined
}

/**
 * The API's view of a tool: name, description, and the JSON Schema of its input (an object schema,
 * without the `$schema` key, references inlined), or the tool's own `inputSchema` as is.
 *
 * @category Conversions
 */
export const toDefinition = (tool: Any): ToolDefinition => {
  if (tool.inputSchema !== undefined) {
    return { name: tool.name, description: tool.description, input_schema: tool.inputSchema }
  }
  const { $schema: _, ...schema } = JSONSchema.make(tool.input) as unknown as Record<string, unknown>
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...inlineRefs(schema) } as ToolDefinition["input_schema"]
  }
}

/** Fails a tool call with a message for the model. @category Constructors */
export const fail = (message: string): Effect.Effect<never, ToolError> => Effect.fail(new ToolError({ message }))
