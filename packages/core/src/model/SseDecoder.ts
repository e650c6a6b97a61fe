/**
 * A server-sent events decoder that works one network read at a time, synchronously: bytes in, the
 * events completed by those bytes out, through a callback. It frames events as the SDK's own SSE
 * reader does (lines ending in `\n`, `\r\n` or `\r`, split anywhere, UTF-8 split anywhere; `event`
 * and `data` fields; comments and other fields ignored; a blank line ends an event), but it costs
 * one call per read instead of two async generator steps per event.
 *
 * @since 0.1.0
 */

/** Called with each complete event: its `event` field (`null` when absent) and its data lines joined by `\n`. */
export type OnEvent = (event: string | null, data: string) => void

/** The decoder's state for one response body. @category Models */
export class SseDecoder {
  private readonly utf8 = new TextDecoder("utf-8", { ignoreBOM: true })
  /** Text after the last line ending seen (a partial line). */
  private rest = ""
  private event: string | null = null
  private data: string | undefined = undefined
  /** The last `event` value read (most events have the same name as the one before). */
  private last: string | null = null

  /** Decodes one read, calling `onEvent` for every event it completes, in order. */
  decode(bytes: Uint8Array, onEvent: OnEvent): void {
    const decoded = this.utf8.decode(bytes, { stream: true })
    // No line ending: nothing completes; keep the text (searching it would copy the pending line).
    if (decoded.indexOf("\n") === -1 && decoded.indexOf("\r") === -1 && !this.rest.endsWith("\r")) {
      this.rest += decoded
      return
    }
    if (decoded.indexOf("\r") === -1 && !this.rest.endsWith("\r")) {
      // The common case. The read is scanned in place, a flat string: only the pending line is
      // joined to its end (joining the whole read to it would make every access go through a cons).
      let start = 0
      if (this.rest.length > 0) {
        const first = decoded.indexOf("\n")
        const line = this.rest + decoded.slice(0, first)
        this.rest = ""
        this.line(line, 0, line.length, onEvent)
        start = first + 1
      }
      let end: number
      while ((end = decoded.indexOf("\n", start)) !== -1) {
        this.line(decoded, start, end, onEvent)
        start = end + 1
      }
      this.rest = decoded.slice(start)
      return
    }
    const text = this.rest + decoded
    let start = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c !== 10 && c !== 13) continue
      // A `\r` at the end may be the first half of a `\r\n` split across reads.
      if (c === 13 && i + 1 === text.length) break
      this.line(text, start, i, onEvent)
      if (c === 13 && text.charCodeAt(i + 1) === 10) i++
      start = i + 1
    }
    this.rest = text.slice(start)
  }

  /** The body ended: its last lines, if they did not end in a line break, are read as lines. */
  end(onEvent: OnEvent): void {
    const text = this.rest + this.utf8.decode()
    this.rest = ""
    if (text.length === 0) return
    for (const line of text.replace(/\r$/, "").split(/\r\n|[\n\r]/)) this.line(line, 0, line.length, onEvent)
  }

  /**
   * The line `text[start, end)`, read in place: only a `data` value is copied out (an `event` value
   * equal to the previous one is reused), so a line costs no allocation beyond its data.
   */
  private line(text: string, start: number, end: number, onEvent: OnEvent): void {
    if (text.charCodeAt(start) === 0xfeff) start++
    if (start === end) {
      // (An empty `event` counts as none, as in the SDK.)
      if ((this.event === null || this.event === "") && this.data === undefined) return
      const event = this.event
      const data = this.data ?? ""
      this.event = null
      this.data = undefined
      onEvent(event, data)
      return
    }
    let colon = start
    while (colon < end && text.charCodeAt(colon) !== 58) colon++
    if (colon === end) colon = -1
    else if (colon === start) return
    const nameLength = (colon === -1 ? end : colon) - start
    const from = colon === -1 ? end : text.charCodeAt(colon + 1) === 32 && colon + 1 < end ? colon + 2 : colon + 1
    if (nameLength === 4 && text.startsWith("data", start)) {
      const value = text.slice(from, end)
      this.data = this.data === undefined ? value : `${this.data}\n${value}`
    } else if (nameLength === 5 && text.startsWith("event", start)) {
      const last = this.last
      this.event = last !== null && last.length === end - from && text.startsWith(last, from) ? last : text.slice(from, end)
      this.last = this.event
    }
  }
}
