/**
 * Prompt caching: a `ModelClient` decorator that marks each foreground request with `cache_control`
 * breakpoints, so that consecutive requests of a session read the prefix the one before wrote.
 * The API caches the prefix in the order tools → system → messages; the breakpoints are:
 *
 * 1. the last tool definition (the tools: the same in every session with the same tools),
 * 2. the last block of the system prompt's stable part (`ModelRequest.systemStableBlocks`; all of a
 *    system prompt without one), so the stable prefix is shared across sessions and the session's
 *    own part (project instructions, git, environment) comes after it,
 * 3. the last block of the last message (the conversation tail), so the next request, which
 *    repeats this one's messages and adds to them, reads all of this one from the cache.
 *
 * At most {@link MAX_BREAKPOINTS} per request (the API's limit), counting any the request already
 * carries; when there is not room for all three, the tail's is placed first, then the system
 * prompt's, then the tools'. No other breakpoint moves from one request to the next, so everything
 * before the tail's is the same in consecutive requests.
 *
 * The marks are made on the request only: the messages marked are copies, and the session's
 * transcript never holds a `cache_control`. Messages whose content is a plain string are sent as one
 * text block (what the string stands for), so a message sends the same bytes whether it is the
 * marked tail or not: a request's body, up to its last breakpoint, is a byte-for-byte prefix of the
 * next request's. Copies are made once per message, so the cost per request does not grow with the
 * history.
 *
 * Background requests are one-offs: they are left unmarked, since a cache write costs more than plain
 * input, unless they share the conversation's prefix (`ModelRequest.cacheTailAt`, a compaction
 * summary): then the tail's breakpoint goes where the conversation's previous request put it, so
 * the prefix is read from the cache and nothing new is written. Remove the layer (or set
 * `DISABLE_PROMPT_CACHING=1` for {@link layerConfig}) for no caching; {@link layer}'s options choose
 * which breakpoints, the requests marked, and the cache's time to live.
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { decorateClient } from "../internal/decorate.js"
import {
  type ContentBlock,
  DocumentBlock,
  ImageBlock,
  type Message,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
  UserMessage
} from "../message/Message.js"
import { ModelClient } from "./ModelClient.js"
import type { ModelRequest, QuerySource, ToolDefinition } from "./ModelRequest.js"

/** The most breakpoints the API accepts in one request. @category Constants */
export const MAX_BREAKPOINTS = 4

/** A `cache_control` value. @category Models */
export interface CacheControl {
  readonly type: "ephemeral"
  readonly ttl?: "5m" | "1h"
}

/** Options of the decorator. @category Models */
export interface Options {
  /** The cache's time to live: `5m` (the API's default, sent as `{type: "ephemeral"}`) or `1h`. */
  readonly ttl?: "5m" | "1h" | undefined
  /** Mark the last tool definition (default true). */
  readonly tools?: boolean | undefined
  /** Mark the end of the system prompt's stable part (default true). */
  readonly system?: boolean | undefined
  /** Mark the last block of the last message (default true). */
  readonly tail?: boolean | undefined
  /** The requests to mark, by source (default: `foreground` only). */
  readonly sources?: ReadonlyArray<QuerySource> | undefined
}

type Markable = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock

const isMarkable = (block: ContentBlock): block is Markable =>
  (block instanceof TextBlock && block.text.length > 0) || block instanceof ImageBlock ||
  block instanceof DocumentBlock || block instanceof ToolUseBlock || block instanceof ToolResultBlock

const hasMark = (value: unknown): boolean =>
  typeof value === "object" && value !== null && "cache_control" in value &&
  (value as { cache_control?: unknown }).cache_control != null

/** Breakpoints already in a message (cached: messages are immutable). */
const marksIn = new WeakMap<Message, number>()
const countMarks = (message: Message): number => {
  let n = marksIn.get(message)
  if (n === undefined) {
    n = typeof message.content === "string" ? 0 : message.content.filter(hasMark).length
    marksIn.set(message, n)
  }
  return n
}

/**
 * The copies below are made from messages and blocks that are already instances (validated when
 * made) plus a constant `cache_control`: they are built without validating them again, which per
 * request would cost more than the rest of the marking (a tool result's content is walked whole).
 */
const unchecked = { disableValidation: true } as const

/** A message with string content as the one text block it stands for (cached per message). */
const asBlocks = new WeakMap<Message, Message>()
const expand = (message: Message): Message => {
  if (typeof message.content !== "string" || message.content.length === 0) return message
  let out = asBlocks.get(message)
  if (out === undefined) {
    out = new UserMessage({ content: [new TextBlock({ text: message.content }, unchecked)] }, unchecked)
    asBlocks.set(message, out)
  }
  return out
}

/** A copy of `block` with `cache_control` set. */
const markBlock = (block: Markable, mark: CacheControl): Markable => {
  const Block = block.constructor as new(fields: object, options: typeof unchecked) => Markable
  return new Block({ ...block, cache_control: mark }, unchecked)
}

/** The tail breakpoint's copy of a message, per message and mark (so a retried request is the same object). */
const markedTails = new WeakMap<Message, Map<string, Message>>()
const markTail = (message: Message, mark: CacheControl): Message | undefined => {
  if (typeof message.content === "string") return undefined
  const key = mark.ttl ?? ""
  const cached = markedTails.get(message)?.get(key)
  if (cached !== undefined) return cached
  const blocks = message.content
  let index = blocks.length - 1
  while (index >= 0 && !isMarkable(blocks[index]!)) index--
  if (index < 0) return undefined
  const content = blocks.map((b, i) => (i === index ? markBlock(b as Markable, mark) : b))
  const Msg = message.constructor as new(fields: object, options: typeof unchecked) => Message
  const marked = new Msg({ ...message, content }, unchecked)
  const perMark = markedTails.get(message) ?? new Map<string, Message>()
  perMark.set(key, marked)
  markedTails.set(message, perMark)
  return marked
}

/**
 * The marked copies of the system blocks and of the tool definitions, per array (and block, and
 * mark): the same objects in every request of a turn, so that `RequestJson` serialises them once,
 * not once per round. The arrays are never changed once made (a turn's system prompt and a
 * registry's definitions are built once).
 */
const markedSystems = new WeakMap<object, Map<string, ReadonlyArray<Anthropic.Messages.TextBlockParam>>>()
const markedSystemOf = (
  system: ReadonlyArray<Anthropic.Messages.TextBlockParam>,
  target: number,
  mark: CacheControl
): ReadonlyArray<Anthropic.Messages.TextBlockParam> => {
  const key = `${target}:${mark.ttl ?? ""}`
  let perKey = markedSystems.get(system)
  const cached = perKey?.get(key)
  if (cached !== undefined) return cached
  const marked = system.map((b, i) => (i === target ? { ...b, cache_control: mark } : b))
  if (perKey === undefined) markedSystems.set(system, perKey = new Map())
  perKey.set(key, marked)
  return marked
}

const markedTools = new WeakMap<object, Map<string, ReadonlyArray<ToolDefinition>>>()
const markedToolsOf = (tools: ReadonlyArray<ToolDefinition>, mark: CacheControl): ReadonlyArray<ToolDefinition> => {
  const key = mark.ttl ?? ""
  let perKey = markedTools.get(tools)
  const cached = perKey?.get(key)
  if (cached !== undefined) return cached
  const marked = [...tools.slice(0, -1), { ...tools[tools.length - 1]!, cache_control: mark }]
  if (perKey === undefined) markedTools.set(tools, perKey = new Map())
  perKey.set(key, marked)
  return marked
}

/** A system prompt given as a string, as the one text block it stands for (the last one's kept). */
let lastSystem: { readonly text: string; readonly blocks: ReadonlyArray<Anthropic.Messages.TextBlockParam> } | undefined
const systemBlocksOf = (text: string): ReadonlyArray<Anthropic.Messages.TextBlockParam> => {
  if (text.length === 0) return []
  if (lastSystem?.text !== text) lastSystem = { text, blocks: [{ type: "text", text }] }
  return lastSystem.blocks
}

/**
 * `request` with its breakpoints (see the module's description), or `request` itself when its
 * source is not marked.
 *
 * @category Combinators
 */
export const mark = (request: ModelRequest, options: Options = {}): ModelRequest => {
  const shared = request.cacheTailAt
  if (shared === undefined && !(options.sources ?? ["foreground"]).includes(request.source)) return request
  const control: CacheControl = options.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" }

  // One copy of the messages per request, marked in place below.
  const messages = request.messages.map(expand)
  const system: ReadonlyArray<Anthropic.Messages.TextBlockParam> | undefined = typeof request.system === "string"
    ? systemBlocksOf(request.system)
    : request.system
  let tools = request.tools
  let used = (system ?? []).filter(hasMark).length + (tools ?? []).filter(hasMark).length
  for (const m of messages) used += countMarks(m)

  let markedSystem = system
  // Tail, then system, then tools: without room for all, the tools' is left out first.
  const at = shared ?? messages.length - 1
  if (options.tail !== false && used < MAX_BREAKPOINTS && at >= 0 && at < messages.length) {
    const target = messages[at]!
    const marked = hasMarkAtEnd(target) ? undefined : markTail(target, control)
    if (marked !== undefined) {
      messages[at] = marked
      used++
    }
  }
  if (options.system !== false && used < MAX_BREAKPOINTS && system !== undefined && system.length > 0) {
    const stable = Math.min(request.systemStableBlocks ?? system.length, system.length)
    const target = stable - 1
    if (target >= 0 && !hasMark(system[target])) {
      markedSystem = markedSystemOf(system, target, control)
      used++
    }
  }
  if (options.tools !== false && used < MAX_BREAKPOINTS && tools !== undefined && tools.length > 0) {
    const last = tools[tools.length - 1]!
    if (!hasMark(last)) {
      tools = markedToolsOf(tools, control)
      used++
    }
  }
  return {
    ...request,
    messages,
    ...(markedSystem !== undefined ? { system: markedSystem } : {}),
    ...(tools !== undefined ? { tools } : {})
  }
}

/** Whether the last block of `message` already carries a breakpoint. */
const hasMarkAtEnd = (message: Message): boolean =>
  typeof message.content !== "string" && message.content.length > 0 && hasMark(message.content[message.content.length - 1])

/** Decorates `client`: every request it streams is {@link mark}ed first. @category Constructors */
export const make = (client: ModelClient["Type"], options: Options = {}): ModelClient["Type"] =>
  ModelClient.of({ stream: (request) => client.stream(mark(request, options)) })

/** The decorator over the `ModelClient` below it. @category Layers */
export const layer = (options: Options = {}): Layer.Layer<ModelClient, never, ModelClient> =>
  decorateClient((client) => make(client, options))

/**
 * `DISABLE_PROMPT_CACHING` (Claude Code's variable): when true (`1`, `true`), requests go unmarked.
 *
 * @category Configuration
 */
export const disabledConfig: Config.Config<boolean> = Config.boolean("DISABLE_PROMPT_CACHING").pipe(
  Config.withDefault(false)
)

/** {@link layer}, or the client below unchanged when `DISABLE_PROMPT_CACHING` is set. @category Layers */
export const layerConfig: Layer.Layer<ModelClient, ConfigError.ConfigError, ModelClient> = Layer.unwrapEffect(
  Effect.map(disabledConfig, (disabled) => disabled ? decorateClient((client) => client) : layer())
)
