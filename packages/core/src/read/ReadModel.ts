/**
 * The read model of a session (`session/read`): a stable, versioned projection of its transcript,
 * computed only from the recorded facts (the entries, in order; see `Facts`), never from a live
 * session. It is a Schema, so it crosses the runtime protocol and is written as JSON as it is.
 *
 * Format {@link FORMAT}:
 * - the session: id, working directory, transcript file, model, origin (fork or `/clear`), the
 *   first and last entries' times;
 * - `turns`, in order, each with its turn id, a summary of its envelope (model and why, system
 *   prompt hash, context source, permission mode, rules, tools, attachments, command, metadata),
 *   its prompt, its `items` in order (the model's text and thinking, tool calls with their input,
 *   result, error flag, permission decision and the time until their result was recorded, user
 *   text inside the turn, rewrites and compactions, model switches), its final answer and stop
 *   reason, the model requests it made, and its usage and cost: the difference between the
 *   session's token totals at its end and at its start (`usage` entries are running totals);
 * - what is open: the `queue` (inputs waiting), `pendingActions` (`Action.pendingAfter`), the
 *   `goal`, the task list (`todos`, the last `TodoWrite` call's);
 * - `files` read, written and edited (from the calls that succeeded, and `@` attachments);
 * - `totals`: turns, requests, tool calls, errors, denials, usage per model and cost.
 *
 * Costs use a pricing table (default `Pricing.defaultTable`); a model it does not know costs 0 and
 * is listed in `totals.unpriced`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as nodePath from "node:path"
import { TextBlock, ThinkingBlock, type ToolResultBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import * as Action from "../action/Action.js"
import * as Goal from "../goal/Goal.js"
import * as Admission from "../admission/Admission.js"
import * as Pricing from "../session/Pricing.js"
import { SessionStore } from "../session/SessionStore.js"
import { TokenUsage } from "../session/TokenUsage.js"
import type * as TokenUsageModule from "../session/TokenUsage.js"
import type * as Transcript from "../session/Transcript.js"
import type { LoadError } from "../session/TranscriptError.js"
import * as TranscriptEntry from "../session/TranscriptEntry.js"
import * as TurnEnvelope from "../session/TurnEnvelope.js"
import * as PermissionDecision from "./PermissionDecision.js"
import * as Facts from "./Facts.js"

/** The read model's format. @category Constants */
export const FORMAT = 1

/** Token counts per model. @category Schemas */
export const Usage = Schema.Record({ key: Schema.String, value: TokenUsage })

/** What a turn's envelope says, in brief (the whole envelope is in the replay export). @category Schemas */
export const EnvelopeSummary = Schema.Struct({
  model: Schema.String,
  modelReason: TurnEnvelope.ModelReason,
  fallbacks: Schema.Array(Schema.String),
  /** The sha256 of the system prompt sent. */
  systemPrompt: Schema.String,
  contextSource: TurnEnvelope.ContextSource,
  permissionMode: Schema.String,
  allow: Schema.Array(Schema.String),
  deny: Schema.Array(Schema.String),
  ask: Schema.Array(Schema.String),
  tools: Schema.Array(Schema.String),
  toolsHash: Schema.String,
  /** Files `@` mentions attached. */
  attachments: Schema.Array(Schema.String),
  command: Schema.optional(Schema.Struct({ name: Schema.String, args: Schema.String })),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

/** The model's text. @category Items */
export const TextItem = Schema.TaggedStruct("text", { text: Schema.String })
/** The model's thinking. @category Items */
export const ThinkingItem = Schema.TaggedStruct("thinking", { text: Schema.String })
/** A tool call, its result and its permission decision. @category Items */
export const ToolCallItem = Schema.TaggedStruct("tool_call", {
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown,
  /** The result's text as the model read it (images and documents named), `null` when none was recorded. */
  output: Schema.NullOr(Schema.String),
  isError: Schema.Boolean,
  decision: PermissionDecision.Decision,
  /**
   * Milliseconds from the recording of the answer that made the call to the recording of its
   * result. Not the call's own duration, which is not recorded (calls start while the answer
   * streams, and a round's results are recorded together).
   */
  elapsedMs: Schema.NullOr(Schema.Number)
})
/** User text inside a turn (a continuation request, text after tool results). @category Items */
export const UserTextItem = Schema.TaggedStruct("user_text", { text: Schema.String })
/** The conversation was rewritten by a stage or compacted (`summary`: the compaction's). @category Items */
export const RewriteItem = Schema.TaggedStruct("rewrite", {
  trigger: Schema.String,
  compaction: Schema.optional(TranscriptEntry.CompactionInfo),
  summary: Schema.optional(Schema.String)
})
/** The model of the calls changed (`fallback`: after overloads). @category Items */
export const ModelItem = Schema.TaggedStruct("model", { model: Schema.String, fallback: Schema.Boolean })

/** What a turn recorded, in order. @category Items */
export const Item = Schema.Union(TextItem, ThinkingItem, ToolCallItem, UserTextItem, RewriteItem, ModelItem)
/** @category Items */
export type Item = typeof Item.Type
/** @category Items */
export type ToolCall = typeof ToolCallItem.Type

/** One turn. @category Schemas */
export const Turn = Schema.Struct({
  /** From 1. */
  index: Schema.Int,
  turnId: Schema.String,
  /** The uuid of the `user` entry holding its prompt. */
  userEntry: Schema.NullOr(Schema.String),
  startedAt: Schema.String,
  endedAt: Schema.String,
  prompt: Schema.String,
  envelope: Schema.NullOr(EnvelopeSummary),
  items: Schema.Array(Item),
  /** The text of its last answer. */
  answer: Schema.NullOr(Schema.String),
  stopReason: Schema.NullOr(Schema.String),
  /** Model answers recorded in it. */
  requests: Schema.Int,
  /** Its tokens per model: the session's totals at its end less those at its start. */
  usage: Usage,
  costUsd: Schema.Number
})
/** @category Schemas */
export type Turn = typeof Turn.Type

/** An input waiting for its turn. @category Schemas */
export const QueuedInput = Schema.Struct({
  id: Schema.String,
  priority: Admission.PrioritySchema,
  queuedAt: Schema.Number,
  /** Its text (a message's text blocks). */
  text: Schema.String
})

/** A task of the session's task list. @category Schemas */
export const Todo = Schema.Struct({
  content: Schema.String,
  status: Schema.String,
  activeForm: Schema.optional(Schema.String)
})

/** The files the session's calls read, wrote (`Write`) and edited (`Edit`, `MultiEdit`), absolute and sorted. @category Schemas */
export const Files = Schema.Struct({
  read: Schema.Array(Schema.String),
  written: Schema.Array(Schema.String),
  edited: Schema.Array(Schema.String)
})

/** The session's totals. @category Schemas */
export const Totals = Schema.Struct({
  turns: Schema.Int,
  requests: Schema.Int,
  toolCalls: Schema.Int,
  toolErrors: Schema.Int,
  denied: Schema.Int,
  usage: Usage,
  costUsd: Schema.Number,
  /** Models the pricing table does not know (counted at $0). */
  unpriced: Schema.Array(Schema.String)
})

/** The read model of a session. @category Schemas */
export const ReadModel = Schema.Struct({
  format: Schema.Literal(FORMAT),
  sessionId: Schema.String,
  cwd: Schema.String,
  file: Schema.String,
  /** The session's model (its last non-fallback one), if any was recorded. */
  model: Schema.NullOr(Schema.String),
  origin: Schema.NullOr(Schema.Struct({ source: Schema.Literal("fork", "clear"), from: Schema.String })),
  startedAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.NullOr(Schema.String),
  turns: Schema.Array(Turn),
  queue: Schema.Array(QueuedInput),
  pendingActions: Schema.Array(Action.Pending),
  goal: Schema.NullOr(Goal.Goal),
  /** The task list as the last `TodoWrite` call left it, `null` when none was made. */
  todos: Schema.NullOr(Schema.Array(Todo)),
  files: Files,
  totals: Totals,
  /** What was skipped while reading the transcript (a line cut by a crash). */
  warnings: Schema.Array(Schema.String)
})

/** @category Models */
export type ReadModel = typeof ReadModel.Type

/** What every export says of its session. @category Schemas */
export const Header = Schema.Struct({
  sessionId: Schema.String,
  cwd: Schema.String,
  file: Schema.String,
  model: Schema.NullOr(Schema.String),
  startedAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.NullOr(Schema.String)
})

/** The header of a read model's exports. @category Accessors */
export const headerOf = (model: ReadModel): typeof Header.Type => ({
  sessionId: model.sessionId,
  cwd: model.cwd,
  file: model.file,
  model: model.model,
  startedAt: model.startedAt,
  updatedAt: model.updatedAt
})

/** What the projection can be given. @category Models */
export interface Options {
  /** Prices (default `Pricing.defaultTable`). */
  readonly pricing?: Pricing.Table | undefined
}

const counters = [
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "cacheCreationEphemeral5mInputTokens",
  "cacheCreationEphemeral1hInputTokens",
  "requests"
] as const

/** `after` less `before`, per model (models whose counts did not change are left out). */
const usageDelta = (before: TokenUsageModule.PerModel, after: TokenUsageModule.PerModel): Record<string, TokenUsage> => {
  const out: Record<string, TokenUsage> = {}
  for (const [model, a] of after) {
    const b = before.get(model)
    const fields = Object.fromEntries(counters.map((k) => [k, Math.max(0, a[k] - (b?.[k] ?? 0))]))
    if (counters.some((k) => fields[k] !== 0)) out[model] = TokenUsage.make(fields)
  }
  return out
}

const costOf = (usage: Record<string, TokenUsage>, pricing: Pricing.Table): number =>
  Object.entries(usage).reduce((sum, [model, u]) => sum + Pricing.costOf(model, u, pricing), 0)

const summaryOf = (envelope: TurnEnvelope.TurnEnvelope): typeof EnvelopeSummary.Type => ({
  model: envelope.routing.model,
  modelReason: envelope.routing.reason,
  fallbacks: envelope.routing.fallbacks,
  systemPrompt: envelope.systemPrompt,
  contextSource: envelope.context.source,
  permissionMode: envelope.toolPolicy.permissionMode,
  allow: envelope.toolPolicy.allow,
  deny: envelope.toolPolicy.deny,
  ask: envelope.toolPolicy.ask,
  tools: envelope.toolPolicy.tools,
  toolsHash: envelope.toolPolicy.toolsHash,
  attachments: envelope.user.attachments,
  ...(envelope.user.command !== undefined ? { command: envelope.user.command } : {}),
  ...(envelope.metadata !== undefined ? { metadata: envelope.metadata } : {})
})

/** Every tool result of the walk, by `tool_use` id, with when it was recorded. */
const resultsOf = (walk: Facts.Walk): ReadonlyMap<string, { readonly block: ToolResultBlock; readonly at: string }> => {
  const out = new Map<string, { block: ToolResultBlock; at: string }>()
  for (const turn of walk.turns) {
    for (const e of turn.events) {
      if (e._tag === "Results") for (const r of e.results) out.set(r.tool_use_id, { block: r, at: e.at })
    }
  }
  return out
}

const elapsed = (from: string, to: string): number | null => {
  const ms = Date.parse(to) - Date.parse(from)
  return Number.isFinite(ms) ? ms : null
}

/** The items of one turn: each answer's blocks in order, the other events in between. */
const itemsOf = (
  turn: Facts.Turn,
  results: ReturnType<typeof resultsOf>,
  asked: ReadonlyMap<string, PermissionDecision.Asked>
): Array<Item> =>
  turn.events.flatMap((e): Array<Item> => {
    switch (e._tag) {
      case "Answer":
        return e.message.content.flatMap((b): Array<Item> => {
          if (b instanceof TextBlock) return b.text.length > 0 ? [{ _tag: "text", text: b.text }] : []
          if (b instanceof ThinkingBlock) return [{ _tag: "thinking", text: b.thinking }]
          if (!(b instanceof ToolUseBlock)) return []
          const result = results.get(b.id)
          return [{
            _tag: "tool_call",
            id: b.id,
            name: b.name,
            input: b.input,
            output: result === undefined ? null : PermissionDecision.resultText(result.block),
            isError: result?.block.is_error === true,
            decision: PermissionDecision.decide(b, {
              result: result?.block,
              asked: asked.get(b.id),
              policy: turn.envelope?.toolPolicy,
              cwd: turn.cwd
            }),
            elapsedMs: result === undefined ? null : elapsed(e.at, result.at)
          }]
        })
      case "UserText":
        return [{ _tag: "user_text", text: e.text }]
      case "Rewrite":
        return [{
          _tag: "rewrite",
          trigger: e.entry.trigger,
          ...(e.entry.compaction !== undefined ? { compaction: e.entry.compaction } : {}),
          ...(e.summary !== undefined ? { summary: e.summary } : {})
        }]
      case "Model":
        return [{ _tag: "model", model: e.model, fallback: e.fallback }]
      case "Results":
        return []
    }
  })

/** One turn of the walk, projected. */
const turnOf = (
  turn: Facts.Turn,
  results: ReturnType<typeof resultsOf>,
  asked: ReadonlyMap<string, PermissionDecision.Asked>,
  pricing: Pricing.Table
): Turn => {
  const answers = turn.events.flatMap((e) => (e._tag === "Answer" ? [e.message] : []))
  const last = answers.at(-1)
  const usage = usageDelta(turn.usageBefore, turn.usageAfter)
  return {
    index: turn.index,
    turnId: turn.turnId,
    userEntry: turn.userEntry ?? null,
    startedAt: turn.startedAt,
    endedAt: turn.endedAt,
    prompt: turn.prompt,
    envelope: turn.envelope === undefined ? null : summaryOf(turn.envelope),
    items: itemsOf(turn, results, asked),
    answer: last === undefined ? null : last.text,
    stopReason: last?.stop_reason ?? null,
    requests: answers.length,
    usage,
    costUsd: costOf(usage, pricing)
  }
}

/** A queued input's text. */
const queuedText = (input: string | UserMessage): string =>
  typeof input === "string"
    ? input
    : typeof input.content === "string"
    ? input.content
    : input.content.flatMap((b) => (b instanceof TextBlock ? [b.text] : [])).join("\n")

const decodeTodos = Schema.decodeUnknownOption(Schema.Struct({ todos: Schema.Array(Todo) }))

/** The task list the last successful `TodoWrite` call left. */
const todosOf = (calls: ReadonlyArray<ToolCall>): ReadonlyArray<typeof Todo.Type> | null => {
  for (let i = calls.length - 1; i >= 0; i--) {
    const call = calls[i]!
    if (call.name !== "TodoWrite" || call.isError || call.output === null) continue
    const decoded = decodeTodos(call.input)
    if (decoded._tag === "Some") return decoded.value.todos
  }
  return null
}

const READS = new Set(["Read"])
const WRITES = new Set(["Write"])
const EDITS = new Set(["Edit", "MultiEdit", "NotebookEdit"])

/** The files the successful calls read, wrote and edited, and the attachments. */
const filesOf = (turns: ReadonlyArray<Turn>, cwd: string): typeof Files.Type => {
  const sets = { read: new Set<string>(), written: new Set<string>(), edited: new Set<string>() }
  for (const turn of turns) {
    for (const a of turn.envelope?.attachments ?? []) sets.read.add(nodePath.resolve(cwd, a))
    for (const item of turn.items) {
      if (item._tag !== "tool_call" || item.isError || item.output === null) continue
      const input = item.input as { readonly file_path?: unknown; readonly notebook_path?: unknown } | null
      const path = input?.file_path ?? input?.notebook_path
      if (typeof path !== "string") continue
      const set = READS.has(item.name) ? sets.read : WRITES.has(item.name) ? sets.written : EDITS.has(item.name) ? sets.edited : undefined
      set?.add(nodePath.resolve(cwd, path))
    }
  }
  return { read: [...sets.read].sort(), written: [...sets.written].sort(), edited: [...sets.edited].sort() }
}

/** Every tool call of a read model, in order. @category Accessors */
export const toolCalls = (model: { readonly turns: ReadonlyArray<Turn> }): ReadonlyArray<ToolCall & { readonly turn: Turn }> =>
  model.turns.flatMap((turn) => turn.items.flatMap((i) => (i._tag === "tool_call" ? [{ ...i, turn }] : [])))

/**
 * The read model of a transcript (`Transcript.parseEntries`): a pure function of its entries.
 *
 * @category Constructors
 */
export const make = (decoded: Transcript.Decoded, options: Options = {}): ReadModel => {
  const { entries, loaded } = decoded
  const pricing = options.pricing ?? Pricing.defaultTable
  const walk = Facts.walk(entries)
  const results = resultsOf(walk)
  const asked = PermissionDecision.askedByCall(walk.actions)
  const turns = walk.turns.map((t) => turnOf(t, results, asked, pricing))
  const calls = toolCalls({ turns })
  const usage = Object.fromEntries(loaded.usage)
  const cwd = entries[0]?.cwd ?? ""
  return {
    format: FORMAT,
    sessionId: loaded.sessionId,
    cwd,
    file: loaded.file,
    model: loaded.model ?? null,
    origin: loaded.origin ?? null,
    startedAt: walk.startedAt ?? null,
    updatedAt: walk.updatedAt ?? null,
    turns,
    queue: loaded.queued.map((q) => ({ id: q.id, priority: q.priority, queuedAt: q.queuedAt, text: queuedText(q.input) })),
    pendingActions: Action.pendingAfter(loaded.actions),
    goal: loaded.goal ?? null,
    todos: todosOf(calls),
    files: filesOf(turns, cwd),
    totals: {
      turns: turns.length,
      requests: turns.reduce((n, t) => n + t.requests, 0),
      toolCalls: calls.length,
      toolErrors: calls.filter((c) => c.isError).length,
      denied: calls.filter((c) => c.decision.outcome === "denied").length,
      usage,
      costUsd: costOf(usage, pricing),
      unpriced: Object.keys(usage).filter((m) => Pricing.priceOf(m, pricing) === undefined)
    },
    warnings: loaded.warnings
  }
}

/**
 * Reads session `sessionId` of `cwd` from the `SessionStore` and projects it.
 *
 * @category Loading
 */
export const load = (
  sessionId: string,
  options: Options & { readonly cwd: string }
): Effect.Effect<ReadModel, LoadError, SessionStore> =>
  Effect.flatMap(SessionStore, (store) => Effect.map(store.loadEntries(options.cwd, sessionId), (d) => make(d, options)))

/** The read model as JSON-ready data. @category Encoding */
export const encode: (model: ReadModel) => typeof ReadModel.Encoded = Schema.encodeSync(ReadModel)
