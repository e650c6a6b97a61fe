/**
 * What the context window holds, by category (`/context`): the system prompt, the tool
 * definitions, the messages, and the free space left in the model's window. System prompt and tools
 * are estimated by size (about four characters a token); the messages are the API's own count for
 * everything up to the last answer, less that estimate of system and tools, plus estimates of
 * newer messages (`TokenEstimate.ofRequest`).
 *
 * @since 0.1.0
 */
import type { Message } from "../message/Message.js"
import type { ModelRequest, ToolDefinition } from "../model/ModelRequest.js"
import * as TokenEstimate from "./TokenEstimate.js"

/** One category of the context and its tokens. @category Models */
export interface Category {
  readonly name: "System prompt" | "Tools" | "Messages" | "Free space"
  readonly tokens: number
}

/** The context of the next request, by category. @category Models */
export interface Usage {
  readonly model: string
  readonly window: number
  /** Tokens in use (system prompt, tools and messages). */
  readonly used: number
  /** System prompt, tools, messages and free space, in that order; they add up to the window (free space is never negative). */
  readonly categories: ReadonlyArray<Category>
}

/** What the next request would carry. @category Models */
export interface Request {
  readonly model: string
  readonly system?: ModelRequest["system"] | undefined
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly messages: ReadonlyArray<Message>
  /** The window (default: the model's, `TokenEstimate.windowFor`). */
  readonly window?: number | undefined
}

const estimate = (chars: number): number => Math.ceil(chars / TokenEstimate.CHARS_PER_TOKEN)

/** The estimated tokens of a system prompt. @category Estimates */
export const ofSystem = (system: ModelRequest["system"] | undefined): number => {
  if (system === undefined) return 0
  if (typeof system === "string") return estimate(system.length)
  let chars = 0
  for (const block of system) chars += block.text.length
  return estimate(chars)
}

/** The estimated tokens of tool definitions, as their JSON. @category Estimates */
export const ofTools = (tools: ReadonlyArray<ToolDefinition>): number =>
  tools.length === 0 ? 0 : estimate(JSON.stringify(tools).length)

/** The context of a request by category. @category Estimates */
export const measure = (request: Request): Usage => {
  const window = request.window ?? TokenEstimate.windowFor(request.model)
  const system = ofSystem(request.system)
  const tools = ofTools(request.tools)
  // With an answer's usage, the API counted system and tools too; without one, the estimate has neither.
  const total = TokenEstimate.ofRequest(request.messages, system + tools)
  const messages = Math.max(0, total - system - tools)
  const used = system + tools + messages
  return {
    model: request.model,
    window,
    used,
    categories: [
      { name: "System prompt", tokens: system },
      { name: "Tools", tokens: tools },
      { name: "Messages", tokens: messages },
      { name: "Free space", tokens: Math.max(0, window - used) }
    ]
  }
}

const percent = (part: number, whole: number): string => `${whole === 0 ? 0 : ((part / whole) * 100).toFixed(1)}%`

/** What `/context` prints. @category Rendering */
export const format = (usage: Usage): string => {
  const count = (n: number) => n.toLocaleString("en-US")
  const width = Math.max(...usage.categories.map((c) => count(c.tokens).length))
  return [
    `Context usage (estimated): ${usage.model} · ${count(usage.used)} / ${count(usage.window)} tokens (${
      percent(usage.used, usage.window)
    })`,
    ...usage.categories.map((c) =>
      `  ${`${c.name}:`.padEnd(15)}${count(c.tokens).padStart(width)} tokens (${percent(c.tokens, usage.window)})`
    )
  ].join("\n")
}
