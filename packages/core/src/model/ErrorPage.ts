/**
 * What to show of an answer that is not the API's JSON: an HTML error page from a proxy or a load
 * balancer (nginx, Cloudflare), or plain text. People get its `<title>` (or, without one, its first
 * line of text), bounded, never the whole page.
 *
 * @since 0.1.0
 */
import { STATUS_CODES } from "node:http"

/** The most characters of a page shown. @category Constants */
export const MAX_EXCERPT = 160

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " }

/** Text with the common entities decoded and whitespace runs collapsed. */
const clean = (text: string): string =>
  text.replace(/&(#\d+|[a-z]+);/gi, (all, name: string) =>
    name.startsWith("#") ? String.fromCharCode(Number(name.slice(1))) : ENTITIES[name.toLowerCase()] ?? all
  ).replace(/\s+/g, " ").trim()

/** `text` cut to {@link MAX_EXCERPT} characters, with an ellipsis when cut. */
const bounded = (text: string): string => text.length > MAX_EXCERPT ? `${text.slice(0, MAX_EXCERPT - 1)}…` : text

/** Whether a body is HTML, by its content type or, without one, by its first tag. @category Predicates */
export const isHtml = (text: string, contentType?: string | undefined): boolean =>
  contentType !== undefined && contentType !== ""
    ? /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(contentType)
    : /^\s*(<!doctype html|<html)/i.test(text)

/**
 * A one-line excerpt of a body that is not the API's: an HTML page's `<title>` (or its first line of
 * text, tags removed), or a text's first non-empty line; at most {@link MAX_EXCERPT} characters.
 * Only the first 64 KB are looked at.
 *
 * @category Formatting
 */
export const excerpt = (body: string, contentType?: string | undefined): string => {
  const head = body.slice(0, 65_536)
  if (isHtml(head, contentType)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(head)?.[1]
    if (title !== undefined && clean(title) !== "") return bounded(clean(title))
    const text = head.replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]*>/g, "\n")
    const line = text.split(/\r?\n/).map(clean).find((l) => l !== "")
    return bounded(line ?? "(an empty HTML page)")
  }
  const line = head.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== "")
  return bounded(line ?? "(an empty body)")
}

/** `Bad Gateway` for 502: the standard reason phrase of a status, or `HTTP <status>`. @category Formatting */
export const reason = (status: number): string => STATUS_CODES[status] ?? `HTTP ${status}`
