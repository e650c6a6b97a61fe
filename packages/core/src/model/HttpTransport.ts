/**
 * A `fetch` for the Anthropic SDK (its `fetch` option) over `node:http`/`node:https` with one
 * keep-alive agent per client: a model round reuses the previous round's socket, and a request costs
 * one `http.request` instead of undici's fetch machinery. The SDK stays the API client (headers,
 * auth, timeout, error bodies, status errors); this module only moves bytes.
 *
 * It behaves as Node's `fetch` where the kernel and the SDK look: an abort (the caller's signal or
 * the SDK's timeout) rejects with an `AbortError` before the answer and fails the body after it; a
 * connection that fails before an answer rejects with `TypeError("fetch failed")` whose `cause` is
 * the socket error (its `code` is what `ModelError` classifies); one that breaks mid-body fails the
 * body. Compressed answers (`gzip`, `deflate`, `br`) are decompressed as fetch does. Requests this
 * transport cannot send (a streamed body, a `Request` object) go to the global `fetch`.
 *
 * The body of an answer is readable two ways: as the `Response`'s web stream (what the SDK reads for
 * an error status), or directly, a network read at a time without web-stream promises, through
 * {@link bodyOf} (what the kernel's stream reader uses).
 *
 * @since 0.1.0
 */
import * as http from "node:http"
import * as https from "node:https"
import type { Readable } from "node:stream"
import * as zlib from "node:zlib"

/**
 * An answer's body, read directly: `read()` gives the bytes buffered now (synchronously), `null` at
 * the end, or `undefined` when nothing has arrived yet (then await `wait()`); a broken connection or
 * an abort throws from `read()`.
 *
 * @category Models
 */
export interface Body {
  readonly read: () => Uint8Array | null | undefined
  /** Resolves when `read()` has something to say (bytes, the end, or an error). */
  readonly wait: () => Promise<void>
  /** Stops reading and closes the connection (it is not reused). */
  readonly cancel: () => void
}

const bodies = new WeakMap<Response, Body>()

/**
 * The directly readable body of a `Response` this transport produced, or `undefined` for any other
 * response (then read `response.body`). Use one or the other, not both.
 *
 * @category Accessors
 */
export const bodyOf = (response: Response): Body | undefined => bodies.get(response)

const abortError = (signal: AbortSignal): unknown =>
  signal.reason instanceof Error ? signal.reason : new DOMException("This operation was aborted", "AbortError")

/**
 * How many bytes a body buffers before it stops reading the socket until they are read: what one
 * wake-up of its reader carries at most (about 2,000 small events), enough to pay the layers above
 * once per thousands of events, few enough that those events die young (a 1 MB limit made peak RSS
 * on text:2,000,000 grow by half, and CPU time with it).
 */
const BODY_LIMIT = 256 * 1024

/**
 * Reads a node stream in flowing mode: its bytes are collected as they arrive and one `read()` takes
 * them all. A reader waiting for bytes is woken in the event loop's check phase, after every read
 * of that poll has arrived, not at the first one: when the server sends faster than the reader
 * parses, one wake-up carries several network reads (and each costs the layers above once per
 * wake-up, not per read); when it does not, nothing waits longer than it did. Past `BODY_LIMIT`
 * unread bytes the stream is paused until they are read.
 *
 * @internal
 */
export const bodyFromReadable = (stream: Readable, aborted: () => boolean, destroy: () => void): Body => {
  let ended = false
  let failure: { readonly error: unknown } | undefined
  let waiter: (() => void) | undefined
  let pending: Array<Buffer> = []
  let size = 0
  let paused = false
  let scheduled = false
  const wake = () => {
    const w = waiter
    waiter = undefined
    w?.()
  }
  const wakeLater = () => {
    if (waiter === undefined || scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      wake()
    })
  }
  stream.on("data", (chunk: Buffer) => {
    pending.push(chunk)
    size += chunk.byteLength
    if (size >= BODY_LIMIT && !paused) {
      paused = true
      stream.pause()
    }
    wakeLater()
  })
  stream.on("end", () => {
    ended = true
    wakeLater()
  })
  // As Node's fetch: a body that breaks off fails with `TypeError("terminated")`, its cause the socket's error.
  stream.on("error", (error) => {
    failure ??= { error: aborted() ? error : new TypeError("terminated", { cause: error }) }
    wake()
  })
  stream.on("close", () => {
    // Closed before its end without an error (a reset that node reports only as `aborted`).
    if (!ended) failure ??= { error: new TypeError("terminated", { cause: Object.assign(new Error("aborted"), { code: "ECONNRESET" }) }) }
    wake()
  })
  return {
    read: () => {
      if (failure !== undefined) throw failure.error
      if (pending.length > 0) {
        const out = pending.length === 1 ? pending[0]! : Buffer.concat(pending, size)
        pending = []
        size = 0
        if (paused) {
          paused = false
          stream.resume()
        }
        return out
      }
      return ended ? null : undefined
    },
    wait: () => new Promise<void>((resolve) => (waiter = resolve)),
    cancel: () => {
      ended = true
      destroy()
    }
  }
}

/** A web stream over a `Body`, pulled only when read (so a body read directly never feeds it). */
const webStream = (body: Body): ReadableStream<Uint8Array> =>
  new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      for (;;) {
        const chunk = body.read()
        if (chunk === null) return controller.close()
        if (chunk !== undefined) return controller.enqueue(chunk)
        await body.wait()
      }
    },
    cancel: () => body.cancel()
  }, { highWaterMark: 0 })

const headersOf = (init: RequestInit | undefined): Record<string, string> => {
  const out: Record<string, string> = {}
  const given = init?.headers
  if (given === undefined) return out
  const headers = given instanceof Headers ? given : new Headers(given)
  headers.forEach((value, name) => {
    out[name] = value
  })
  return out
}

const NULL_BODY = new Set([101, 204, 205, 304])

/** Errors of a request sent on a kept-alive socket the server had closed. */
const STALE_CODES = new Set(["ECONNRESET", "EPIPE"])

/** How many stale kept-alive sockets one request may meet before it fails. */
const MAX_STALE = 4

const headersFrom = (raw: Array<string>): Headers => {
  const headers = new Headers()
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  return headers
}

const decompressor = (encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined => {
  switch (encoding?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
    case "deflate":
      return zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
    case "br":
      return zlib.createBrotliDecompress()
    default:
      return undefined
  }
}

/** A body read a network read at a time: `read` gives its bytes, or `null` at its end. @category Models */
export interface Reader {
  readonly read: () => Promise<Uint8Array | null>
  /** Stops reading and closes the connection. */
  readonly cancel: () => void
}

/**
 * How to read a response's body: directly when this transport produced it ({@link bodyOf}), else
 * through its web stream; `undefined` when it has none.
 *
 * @category Accessors
 */
export const readerOf = (response: Response): Reader | undefined => {
  const direct = bodyOf(response)
  if (direct !== undefined) {
    return {
      read: async () => {
        for (;;) {
          const chunk = direct.read()
          if (chunk !== undefined) return chunk
          await direct.wait()
        }
      },
      cancel: direct.cancel
    }
  }
  if (response.body === null) return undefined
  const reader = response.body.getReader()
  return {
    read: async () => {
      const { done, value } = await reader.read()
      return done ? null : value
    },
    cancel: () => void reader.cancel().catch(() => undefined)
  }
}

/** Up to `limit` bytes of a body, as UTF-8 text; `complete` when the body ended within them. @category Accessors */
export const readUpTo = async (
  read: Reader["read"],
  limit: number
): Promise<{ readonly text: string; readonly complete: boolean }> => {
  const parts: Array<Uint8Array> = []
  let size = 0
  while (size < limit) {
    const value = await read()
    if (value === null) return { text: Buffer.concat(parts).toString("utf8"), complete: true }
    parts.push(value)
    size += value.byteLength
  }
  return { text: Buffer.concat(parts).subarray(0, limit).toString("utf8"), complete: false }
}

/** Options of {@link make}. @category Models */
export interface Options {
  /** Idle sockets kept per origin (default 4). */
  readonly maxFreeSockets?: number
}

/**
 * A keep-alive `fetch` (for the SDK's `fetch` option). Each call of `make` has its own agents, so
 * its sockets live as long as the client that uses it.
 *
 * @category Constructors
 */
export const make = (options: Options = {}): typeof globalThis.fetch => {
  // An idle socket is closed after 4 s, as undici does (a server may close it first; a request on
  // a socket it closed fails as a connection error, which the kernel's retry layer handles).
  const agentOptions = { keepAlive: true, maxFreeSockets: options.maxFreeSockets ?? 4, timeout: 4_000 }
  const httpAgent = new http.Agent(agentOptions)
  const httpsAgent = new https.Agent(agentOptions)
  const send = (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit): Promise<Response> => {
    const body = init?.body
    if (
      (typeof input !== "string" && !(input instanceof URL)) ||
      (body != null && typeof body !== "string" && !(body instanceof Uint8Array))
    ) return globalThis.fetch(input, init)
    const url = typeof input === "string" ? new URL(input) : input
    const secure = url.protocol === "https:"
    if (!secure && url.protocol !== "http:") return globalThis.fetch(input, init)
    const signal = init?.signal ?? undefined
    if (signal?.aborted) return Promise.reject(abortError(signal))
    return new Promise<Response>((resolve, reject) => {
      const headers = headersOf(init)
      const payload = body == null ? undefined : typeof body === "string" ? Buffer.from(body, "utf8") : body
      if (payload !== undefined) headers["content-length"] = String(payload.byteLength)
      let answered = false
      let request: http.ClientRequest | undefined
      let answer: Readable | undefined
      let onAbort: (() => void) | undefined
      const done = () => {
        if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort)
        onAbort = undefined
      }
      if (signal !== undefined) {
        onAbort = () => {
          // After the answer, its body fails with the abort; before it, the request does.
          if (answer !== undefined) answer.destroy(abortError(signal) as Error)
          request?.destroy(abortError(signal) as Error)
        }
        signal.addEventListener("abort", onAbort, { once: true })
      }
      const aborted = () => signal?.aborted === true
      const attempt = (stale: number) => {
        const sent = (secure ? https : http).request(url, {
          method: init?.method ?? "GET",
          headers,
          agent: secure ? httpsAgent : httpAgent
        })
        request = sent
        sent.on("error", (error: NodeJS.ErrnoException) => {
          if (answered) return
          // A kept-alive socket the server closed while idle: the request never reached it.
          if (!aborted() && sent.reusedSocket && stale > 0 && STALE_CODES.has(error.code ?? "")) {
            return attempt(stale - 1)
          }
          done()
          reject(signal?.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: error }))
        })
        sent.on("response", (response) => {
          answered = true
          const status = response.statusCode ?? 0
          const nullBody = NULL_BODY.has(status) || init?.method === "HEAD"
          const result = new Response(nullBody ? null : webStream(answerBody(sent, response)), {
            status,
            statusText: response.statusMessage ?? "",
            headers: headersFrom(response.rawHeaders)
          })
          if (nullBody) {
            done()
            response.resume()
          } else bodies.set(result, direct!)
          resolve(result)
        })
        sent.end(payload)
      }
      let direct: Body | undefined
      /** The answer's body (decompressed if need be), read directly or through the web stream. */
      const answerBody = (sent: http.ClientRequest, response: http.IncomingMessage): Body => {
        const decoded = decompressor(response.headers["content-encoding"] as string | undefined)
        let stream: Readable = response
        if (decoded !== undefined) {
          response.on("error", (error) => decoded.destroy(error))
          response.on("aborted", () => decoded.destroy(Object.assign(new Error("aborted"), { code: "ECONNRESET" })))
          stream = response.pipe(decoded)
        }
        answer = stream
        // The abort listener lives as long as the body is read.
        stream.on("close", done)
        direct = bodyFromReadable(stream, aborted, () => {
          done()
          sent.destroy()
        })
        return direct
      }
      attempt(MAX_STALE)
    })
  }
  return send as typeof globalThis.fetch
}

/**
 * Whether the environment names an HTTP proxy (`HTTPS_PROXY`, `HTTP_PROXY`, either case). Then the
 * SDK keeps Node's own `fetch`, so that whatever proxy support the runtime has stays in force.
 *
 * @category Predicates
 */
export const proxyConfigured = (env: Record<string, string | undefined> = process.env): boolean =>
  ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"].some((name) => (env[name] ?? "") !== "")
