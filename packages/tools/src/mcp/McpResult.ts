/**
 * An MCP tool result as a Keel tool output, as Claude Code maps it: text stays text, images the
 * model can read become image blocks, embedded resources their text (or image), resource links and
 * audio a line saying what they are; a result with only `structuredContent` is its JSON. The output
 * is capped at `MAX_MCP_OUTPUT_TOKENS` (default 25,000 tokens, about 100,000 characters): past it the
 * text is cut and a note tells the model to page or filter. A result with `isError` fails with its
 * text, so the model gets an error result.
 *
 * @since 0.1.0
 */
import { Message, Tool } from "@keel/core"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import { DEFAULT_MAX_OUTPUT_TOKENS } from "./McpDefaults.js"

/** Claude Code's default cap of one MCP result, in tokens. @category Constants */
export { DEFAULT_MAX_OUTPUT_TOKENS }

/** Characters per token when sizing text (the kernel's estimate). @category Constants */
export const CHARS_PER_TOKEN = 4

/** What one image is counted as against the cap, in tokens (a typical image's cost). @category Constants */
export const IMAGE_TOKENS = 1_600

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

type Block = Message.TextBlock | Message.ImageBlock

const text = (value: string): Block => new Message.TextBlock({ text: value })

const image = (data: string, mimeType: string): Block | undefined =>
  IMAGE_TYPES.has(mimeType)
    ? new Message.ImageBlock({
      source: { type: "base64", media_type: mimeType as "image/png", data }
    })
    : undefined

/** The blocks for one MCP content item. */
const toBlocks = (item: CallToolResult["content"][number], server: string): Array<Block> => {
  switch (item.type) {
    case "text":
      return [text(item.text)]
    case "image":
      return [
        image(item.data, item.mimeType) ??
          text(`[Image of type ${item.mimeType} omitted: the model reads only JPEG, PNG, GIF and WebP]`)
      ]
    case "audio":
      return [text(`[Audio of type ${item.mimeType} omitted: the model cannot read audio]`)]
    case "resource": {
      const r = item.resource
      const where = `[Resource from ${server} at ${r.uri}]`
      if ("text" in r && typeof r.text === "string") return [text(`${where} ${r.text}`)]
      const blob = "blob" in r && typeof r.blob === "string" ? r.blob : ""
      const img = r.mimeType === undefined ? undefined : image(blob, r.mimeType)
      return img !== undefined
        ? [text(where), img]
        : [text(`${where} (binary, ${r.mimeType ?? "unknown type"}, ${Math.floor((blob.length * 3) / 4)} bytes, not shown)`)]
    }
    case "resource_link":
      return [text(`[Resource link: ${item.name}] ${item.uri}${item.description ? ` (${item.description})` : ""}`)]
    default:
      return [text(JSON.stringify(item))]
  }
}

/** The note after a cut output (Claude Code's wording, which models know). @category Constants */
export const truncationNote = (maxTokens: number): string =>
  `[OUTPUT TRUNCATED - exceeded ${maxTokens} token limit]\n\nThe tool output was truncated. If this MCP server provides ` +
  "pagination or filtering tools, use them to retrieve specific portions of the data. If pagination is not available, " +
  "inform the user that you are returning truncated data."

/**
 * The blocks kept under a cap of `maxTokens`: text is counted at {@link CHARS_PER_TOKEN} characters a
 * token, images at {@link IMAGE_TOKENS}; the first block past the cap is cut (text) or dropped
 * (image), and the rest dropped.
 *
 * @category Capping
 */
export const cap = (
  blocks: ReadonlyArray<Block>,
  maxTokens: number
): { readonly kept: ReadonlyArray<Block>; readonly truncated: boolean } => {
  let budget = maxTokens * CHARS_PER_TOKEN
  const kept: Array<Block> = []
  for (const block of blocks) {
    const cost = block.type === "text" ? block.text.length : IMAGE_TOKENS * CHARS_PER_TOKEN
    if (cost <= budget) {
      kept.push(block)
      budget -= cost
      continue
    }
    if (block.type === "text" && budget > 0) kept.push(text(block.text.slice(0, budget)))
    return { kept, truncated: true }
  }
  return { kept, truncated: false }
}

/** Options of {@link toOutput}. @category Models */
export interface Options {
  /** The server's name, for error messages and resource labels. */
  readonly server: string
  /** The MCP tool's name. */
  readonly tool: string
  /** The cap in tokens (default {@link DEFAULT_MAX_OUTPUT_TOKENS}). */
  readonly maxTokens?: number | undefined
}

/**
 * The tool output for an MCP result: a string when it is all text, blocks otherwise; a result with
 * `isError` fails with its text. Its structured result is Claude Code's for MCP tools: the server's
 * `structuredContent` beside the text (`{ content, structuredContent }`), else the text blocks
 * (`[{ type: "text", text }]`, as capped); none for a result with images or documents.
 *
 * @category Conversions
 */
export const toOutput = (result: CallToolResult, options: Options): Effect.Effect<Tool.CallResult, Tool.ToolError> => {
  const content = Array.isArray(result.content) ? result.content : []
  const raw = content.flatMap((item) => toBlocks(item, options.server))
  if (raw.length === 0 && result.structuredContent !== undefined) raw.push(text(JSON.stringify(result.structuredContent)))
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
  const { kept, truncated } = cap(raw, maxTokens)
  const texts = kept.filter((b): b is Message.TextBlock => b.type === "text").map((b) => b.text)
  const note = truncated ? `\n\n${truncationNote(maxTokens)}` : ""
  if (result.isError === true) {
    const detail = texts.join("\n")
    return Tool.fail(
      detail.trim() === "" ? `MCP server ${options.server}: ${options.tool} failed without saying why` : detail + note
    )
  }
  if (texts.length !== kept.length) return Effect.succeed(truncated ? [...kept, text(note.trimStart())] : kept)
  const output = texts.join("\n") + note
  return Effect.succeed(Tool.structured(
    output,
    result.structuredContent !== undefined
      ? { content: output, structuredContent: result.structuredContent }
      : texts.map((t) => ({ type: "text", text: t }))
  ))
}
