/**
 * The turn input envelope: what one model turn was built from, recorded once per turn in the
 * transcript (an `envelope` entry) after the user's message is final and before the model is
 * called. Resume, `/context`, exports and replays read envelopes; none of them assembles the
 * context again on its own.
 *
 * An envelope (format {@link FORMAT}) holds:
 * - `turnId`: the caller's id for the turn (`SubmitOptions.turnId`), else a new one from `Ids`;
 * - `systemPrompt`: the sha256 (hex) of the system prompt sent, whose text is in a
 *   `system_prompt` entry written once per session (per file) before the first envelope that
 *   names it ({@link SystemPromptRecord}: the sections, stable then dynamic, as sent);
 * - `context`: where that prompt's context came from (`assembled` for this session, `resumed` from
 *   the transcript's last envelope, `refreshed` by `/context refresh`, `custom` when the embedder
 *   gave the prompt and nothing was assembled) and its snapshot (`ContextSnapshot`: instruction
 *   files with their paths, environment, git status as sent);
 * - `routing`: the model of the turn, the fallback models in force after it, and why this model
 *   (`default`: the session's own; `flag`: `--model`; `resumed`: the resumed transcript's;
 *   `command`: a custom command's `model:`, this turn only; `switch`: `/model` or `setModel`);
 * - `toolPolicy`: the tools the model sees (names and a sha256 of their definitions), the
 *   permission mode and the `allow`/`deny`/`ask` rules in force, formatted as in settings;
 * - `user`: the effective user message, after slash-command expansion and `@` mentions: its text,
 *   the files the mentions attached, the command that made it, and the uuid of its `user` entry
 *   (which holds the full content, attachments included);
 * - `outputSchema`: the JSON Schema the answer had to match (`--json-schema`, `outputFormat`), if any;
 * - `metadata`: what the caller supplied for the turn (`SubmitOptions.metadata`).
 *
 * A resumed session (`--resume`, `--continue`, a fork) takes the system prompt and the context
 * snapshot of the transcript's last envelope instead of assembling them again, so its first
 * request starts with exactly the bytes of the last request before it (system, tools, messages)
 * and the prompt cache still holds: a commit in between does not rebuild the git section. A new
 * session and `/clear` assemble a fresh one; `/context refresh` rebuilds it on purpose. A
 * transcript without envelopes (written before them) resumes by assembling, as before.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { sha256 as internalSha256 } from "../internal/sha256.js"
import { TextBlock, type UserMessage } from "../message/Message.js"
import type { ToolDefinition } from "../model/ModelRequest.js"
import type * as Permissions from "../permission/Permissions.js"
import * as PermissionRule from "../permission/PermissionRule.js"
import type { ContextAssembly } from "../prompt/ContextAssembly.js"
import * as ContextSnapshot from "../prompt/ContextSnapshot.js"
import * as SessionPrompt from "../prompt/SessionPrompt.js"
import * as SystemPrompt from "../prompt/SystemPrompt.js"

/** The envelope format this Keel writes and reads. @category Constants */
export const FORMAT = 1

/** A sha256 of `text`, as hex. @category Hashing */
export const sha256: (text: string) => string = internalSha256

/**
 * The system prompt as sent, stored once per session: its sections (stable, then dynamic) and
 * whether it went as one string (a string prompt given as it is) rather than a block per section.
 *
 * @category Schemas
 */
export const SystemPromptRecord = Schema.Struct({
  /** The sha256 of the record's other fields (see {@link hashOf}): what envelopes name. */
  hash: Schema.String,
  stable: Schema.Array(SystemPrompt.Section),
  dynamic: Schema.Array(SystemPrompt.Section),
  asString: Schema.optional(Schema.Literal(true))
})

/** @category Models */
export type SystemPromptRecord = typeof SystemPromptRecord.Type

/** Where a turn's context came from. @category Schemas */
export const ContextSource = Schema.Literal("assembled", "resumed", "refreshed", "custom")

/** The context a turn was sent: where it came from, and its facts. @category Schemas */
export const ContextInfo = Schema.Struct({
  source: ContextSource,
  /** Absent when nothing was assembled (`custom`, or an assembly that reports no facts). */
  snapshot: Schema.optional(ContextSnapshot.ContextSnapshot)
})

/** @category Models */
export type ContextInfo = typeof ContextInfo.Type

/** Why a turn runs on its model. @category Schemas */
export const ModelReason = Schema.Literal("default", "flag", "resumed", "command", "switch")

/** @category Models */
export type ModelReason = typeof ModelReason.Type

/** The model of a turn and the ones it may fall back to. @category Schemas */
export const Routing = Schema.Struct({
  model: Schema.String,
  /** The fallback models in force, in order, after repeated overloads (`--fallback-model`). */
  fallbacks: Schema.Array(Schema.String),
  reason: ModelReason
})

/** The tools the model sees and the permissions their calls go through. @category Schemas */
export const ToolPolicy = Schema.Struct({
  tools: Schema.Array(Schema.String),
  /** The sha256 of the tool definitions sent (names, descriptions, input schemas). */
  toolsHash: Schema.String,
  /** The permission mode in force (Claude Code's names). */
  permissionMode: Schema.String,
  allow: Schema.Array(Schema.String),
  deny: Schema.Array(Schema.String),
  ask: Schema.Array(Schema.String),
  additionalDirectories: Schema.Array(Schema.String)
})

/** The effective user message of a turn. @category Schemas */
export const UserInput = Schema.Struct({
  /** The uuid of the `user` entry that holds the message (absent when nothing is written). */
  entry: Schema.optional(Schema.String),
  /** The prompt as it went to the model: the text typed, or the text a command expanded to. */
  text: Schema.String,
  /** The files `@` mentions attached (absolute paths), whose contents follow the text in the message. */
  attachments: Schema.Array(Schema.String),
  /** The content blocks of the message (1 for a plain string). */
  blocks: Schema.Int,
  /** The slash command that made the message (a custom command). */
  command: Schema.optional(Schema.Struct({ name: Schema.String, args: Schema.String }))
})

/** The envelope's fields (an `envelope` transcript entry adds the transcript's own). @category Schemas */
export const fields = {
  format: Schema.Literal(FORMAT),
  turnId: Schema.String,
  /** The sha256 of the system prompt sent: a `system_prompt` entry's `hash`. */
  systemPrompt: Schema.String,
  context: ContextInfo,
  routing: Routing,
  toolPolicy: ToolPolicy,
  user: UserInput,
  outputSchema: Schema.optional(Schema.Unknown),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}

/** A turn input envelope. @category Schemas */
export const TurnEnvelope = Schema.Struct(fields)

/** @category Models */
export type TurnEnvelope = typeof TurnEnvelope.Type

/** The content key of a system prompt record: the sha256 of its sections and form. @category Hashing */
export const hashOf = (record: Omit<SystemPromptRecord, "hash">): string =>
  sha256(JSON.stringify({
    stable: record.stable.map((s) => [s.name, s.text]),
    dynamic: record.dynamic.map((s) => [s.name, s.text]),
    asString: record.asString === true
  }))

/** The record of a resolved prompt. @category Constructors */
export const recordOf = (resolved: SessionPrompt.Resolved): SystemPromptRecord => {
  const body = {
    stable: resolved.prompt.stable,
    dynamic: resolved.prompt.dynamic,
    ...(typeof resolved.request.system === "string" ? { asString: true as const } : {})
  }
  return { hash: hashOf(body), ...body }
}

/**
 * The prompt an assembly made, as a record holds it: without the `append` section (the run's own
 * `appendSystemPrompt` is added again), a string when it went as one.
 *
 * @category Conversions
 */
export const assembledOf = (
  record: SystemPromptRecord,
  snapshot: ContextSnapshot.ContextSnapshot | undefined
): SystemPrompt.SystemPrompt | string => {
  if (record.asString === true) return record.stable.map((s) => s.text).join("\n\n")
  const last = record.dynamic.at(-1)
  const dynamic = last?.name === "append" ? record.dynamic.slice(0, -1) : record.dynamic
  return SystemPrompt.make(record.stable, dynamic, snapshot)
}

/** A session's system prompt, with its record and where its context came from. @category Models */
export interface Prepared {
  readonly resolved: SessionPrompt.Resolved
  readonly record: SystemPromptRecord
  readonly context: ContextInfo
}

/** What a resumed session reuses: the last envelope's context and its prompt's record. @category Models */
export interface Recorded {
  readonly context: ContextInfo
  readonly record: SystemPromptRecord
}

/**
 * What a loaded transcript lets a session reuse: its last envelope's prompt and context, unless
 * that prompt was the embedder's own (nothing assembled to reuse) or there is no envelope.
 *
 * @category Resuming
 */
export const recordedOf = (
  loaded: { readonly envelopes: ReadonlyArray<TurnEnvelope>; readonly prompts: ReadonlyMap<string, SystemPromptRecord> }
): Recorded | undefined => {
  const last = loaded.envelopes.at(-1)
  if (last === undefined || last.context.source === "custom") return undefined
  const record = loaded.prompts.get(last.systemPrompt)
  return record === undefined ? undefined : { context: last.context, record }
}

/**
 * A session's prompt: resolved from its options over `assembly` (`source` says why it was
 * assembled: a new session or a refresh), or, with `recorded`, over the recorded prompt instead
 * of a new assembly (nothing is read, git does not run).
 *
 * @category Constructors
 */
export const prepare = (
  options: SessionPrompt.Options,
  assembly: ContextAssembly["Type"],
  recorded?: Recorded | undefined,
  source: "assembled" | "refreshed" = "assembled"
): Effect.Effect<Prepared> => {
  const custom = options.systemPrompt !== undefined
  const reused = custom ? undefined : recorded
  const from: ContextAssembly["Type"] = reused === undefined
    ? assembly
    : { assemble: () => Effect.succeed(assembledOf(reused.record, reused.context.snapshot)) }
  return Effect.map(SessionPrompt.resolve(options, from), (resolved): Prepared => {
    const snapshot = resolved.prompt.context
    const context: ContextInfo = custom
      ? { source: "custom" }
      : reused !== undefined
      ? reused.context.snapshot !== undefined
        ? { source: "resumed", snapshot: reused.context.snapshot }
        : { source: "resumed" }
      : snapshot !== undefined
      ? { source, snapshot }
      : { source }
    return { resolved, record: recordOf(resolved), context }
  })
}

const toolHashes = new WeakMap<ReadonlyArray<ToolDefinition>, string>()

/** The sha256 of tool definitions (computed once per list). @category Hashing */
export const toolsHashOf = (tools: ReadonlyArray<ToolDefinition>): string => {
  let hash = toolHashes.get(tools)
  if (hash === undefined) {
    hash = sha256(JSON.stringify(tools))
    toolHashes.set(tools, hash)
  }
  return hash
}

/** The tool policy of a turn: the tools offered and the permissions in force. @category Constructors */
export const toolPolicyOf = (
  tools: ReadonlyArray<ToolDefinition>,
  config: Permissions.Config
): typeof ToolPolicy.Type => ({
  tools: tools.map((t) => t.name),
  toolsHash: toolsHashOf(tools),
  permissionMode: config.mode,
  allow: config.allow.map(PermissionRule.format),
  deny: config.deny.map(PermissionRule.format),
  ask: config.ask.map(PermissionRule.format),
  additionalDirectories: config.additionalDirectories ?? []
})

/** The text of a user message: a string as it is, else its text blocks, one a line. */
const textOf = (message: UserMessage): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.flatMap((b) => (b instanceof TextBlock ? [b.text] : [])).join("\n")

/**
 * The effective user message of a turn: `typed` is the prompt as typed when `@` mentions were
 * expanded (the message then holds the attachments after it), else the message's own text.
 *
 * @category Constructors
 */
export const userInputOf = (
  message: UserMessage,
  options: {
    readonly typed?: string | undefined
    readonly attachments?: ReadonlyArray<string> | undefined
    readonly command?: { readonly name: string; readonly args: string } | undefined
  } = {}
): typeof UserInput.Type => ({
  text: options.typed ?? textOf(message),
  attachments: options.attachments ?? [],
  blocks: typeof message.content === "string" ? 1 : message.content.length,
  ...(options.command !== undefined ? { command: options.command } : {})
})

/** What an envelope is made of. @category Models */
export interface Input {
  readonly turnId: string
  /** The system prompt sent (its hash) and where its context came from. */
  readonly prepared: { readonly record: Pick<SystemPromptRecord, "hash">; readonly context: ContextInfo }
  readonly routing: typeof Routing.Type
  readonly toolPolicy: typeof ToolPolicy.Type
  readonly user: typeof UserInput.Type
  readonly outputSchema?: unknown
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

/** An envelope. @category Constructors */
export const make = (input: Input): TurnEnvelope => ({
  format: FORMAT,
  turnId: input.turnId,
  systemPrompt: input.prepared.record.hash,
  context: input.prepared.context,
  routing: input.routing,
  toolPolicy: input.toolPolicy,
  user: input.user,
  ...(input.outputSchema !== undefined ? { outputSchema: input.outputSchema } : {}),
  ...(input.metadata !== undefined ? { metadata: input.metadata } : {})
})

/** The envelope an `envelope` transcript entry holds (without the entry's own fields). @category Conversions */
export const fromEntry = (entry: TurnEnvelope): TurnEnvelope =>
  make({
    turnId: entry.turnId,
    prepared: { record: { hash: entry.systemPrompt }, context: entry.context },
    routing: entry.routing,
    toolPolicy: entry.toolPolicy,
    user: entry.user,
    outputSchema: entry.outputSchema,
    metadata: entry.metadata
  })

/** `envelope` with the uuid of the entry holding its user message. @category Combinators */
export const withUserEntry = (envelope: TurnEnvelope, entry: string): TurnEnvelope => ({
  ...envelope,
  user: { ...envelope.user, entry }
})

const reasons: Record<ModelReason, string> = {
  default: "the session's model",
  flag: "--model",
  resumed: "the resumed session's model",
  command: "the command's model, this turn only",
  switch: "switched with /model"
}

const sources: Record<typeof ContextSource.Type, string> = {
  assembled: "assembled when the session started",
  resumed: "kept from the resumed session (the same prefix, so the prompt cache holds)",
  refreshed: "rebuilt by /context refresh",
  custom: "the prompt given to the session (nothing assembled)"
}

/**
 * The envelope in a few lines, for people (`/context`): the turn, its model and why, the system
 * prompt and where its context came from (and the snapshot's facts), the tools and permissions.
 *
 * @category Rendering
 */
export const describe = (envelope: TurnEnvelope): ReadonlyArray<string> => {
  const { context, routing, toolPolicy } = envelope
  const rules = (["allow", "deny", "ask"] as const)
    .filter((kind) => toolPolicy[kind].length > 0)
    .map((kind) => ` · ${kind}: ${toolPolicy[kind].join(", ")}`)
    .join("")
  return [
    `Last turn: ${envelope.turnId}`,
    `Model: ${routing.model} (${reasons[routing.reason]})` +
    (routing.fallbacks.length > 0 ? ` · falls back to ${routing.fallbacks.join(", ")}` : ""),
    `System prompt: sha256 ${envelope.systemPrompt.slice(0, 12)} · context ${sources[context.source]}`,
    ...(context.snapshot !== undefined ? ContextSnapshot.describe(context.snapshot).map((l) => `  ${l}`) : []),
    `Tools: ${toolPolicy.tools.length === 0 ? "none" : toolPolicy.tools.join(", ")}`,
    `Permissions: ${toolPolicy.permissionMode}${rules}`
  ]
}

/**
 * What the next turn sends, for people (`/context`): the same system prompt as the last turn
 * (`last`), or another (after a refresh, in a new session), with its context.
 *
 * @category Rendering
 */
export const describeNext = (
  next: { readonly hash: string; readonly context: ContextInfo },
  last: TurnEnvelope | undefined,
  refreshed = false
): ReadonlyArray<string> => {
  const lines = refreshed ? ["", "Refreshed the context: instruction files, environment and git as they are now."] : [""]
  if (last !== undefined && last.systemPrompt === next.hash) {
    const kept = next.context.source === "resumed" && last.context.source !== "resumed"
      ? ", kept from the resumed session (the prompt cache holds; /context refresh rebuilds it)"
      : ""
    return [...lines, `Next turn: the same system prompt${kept}.`]
  }
  return [
    ...lines,
    `Next turn: system prompt sha256 ${next.hash.slice(0, 12)} · context ${sources[next.context.source]}`,
    ...(next.context.snapshot !== undefined ? ContextSnapshot.describe(next.context.snapshot).map((l) => `  ${l}`) : [])
  ]
}
