/**
 * A loopback OTLP/HTTP trace receiver on `node:http`: accepts `POST /v1/traces`, records every
 * request, and decodes the JSON ones (`application/json`) into flat spans. Protobuf requests
 * (`application/x-protobuf`) are accepted and recorded with their raw body, but not decoded: they
 * add no spans.
 *
 * @since 0.1.0
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** One span as received, flattened out of `resourceSpans[].scopeSpans[].spans[]`. */
export interface ReceivedSpan {
  readonly name: string
  /** Hex, as OTLP/JSON carries it. */
  readonly traceId: string
  readonly spanId: string
  /** `undefined` for a root span (absent or empty in the request). */
  readonly parentSpanId: string | undefined
  /** The span's attributes, decoded from OTLP `AnyValue`s. */
  readonly attributes: Record<string, unknown>
  /** Nanoseconds since the epoch, as a decimal string. */
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  /** `code`: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string }
  /** OTLP `SpanKind` (1 internal, 2 server, 3 client, ...), when sent. */
  readonly kind: number | undefined
  /** The attributes of the span's resource (`service.name`, `service.version`, ...). */
  readonly resource: Record<string, unknown>
  /** The name of the instrumentation scope. */
  readonly scope: string | undefined
}

/** A request the receiver got, on any path. */
export interface ReceivedRequest {
  readonly method: string
  /** The URL path, without the query string. */
  readonly path: string
  /** The request headers, lower-cased as node reports them. */
  readonly headers: http.IncomingHttpHeaders
  /** `content-type` without parameters, lower-cased (`application/json`, `application/x-protobuf`). */
  readonly contentType: string
  /** The body exactly as it arrived. */
  readonly body: Buffer
  /** The parsed body of a JSON `POST /v1/traces`; `undefined` for protobuf and anything else. */
  readonly json: unknown
  /** The spans decoded from `json` (none for protobuf). */
  readonly spans: ReadonlyArray<ReceivedSpan>
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`: `http://127.0.0.1:PORT`. */
  readonly url: string
  /** The traces URL, for `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: `<url>/v1/traces`. */
  readonly tracesUrl: string
  /** Every request so far, in arrival order. */
  readonly requests: () => ReadonlyArray<ReceivedRequest>
  /** Every span decoded so far, in arrival order. */
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /**
   * Resolves with the spans once `predicate` holds for them (checked now and after each request);
   * rejects after `timeoutMs` (default 5000) naming the spans that did arrive.
   */
  readonly waitForSpans: (
    predicate: (spans: ReadonlyArray<ReceivedSpan>) => boolean,
    timeoutMs?: number
  ) => Promise<ReadonlyArray<ReceivedSpan>>
  /** Stops the server, dropping any connection still open. */
  readonly close: () => Promise<void>
}

/** Options of {@link start}. */
export interface StartOptions {
  /** The port to listen on; default 0 (any free port). */
  readonly port?: number
  /** The status to answer `POST /v1/traces` with (default 200); the request is recorded either way. */
  readonly status?: number
}

/**
 * An OTLP `AnyValue` (JSON encoding) as a plain value: `intValue` (a string in JSON) as a number (a
 * bigint past 2^53), `arrayValue` as an array, `kvlistValue` as a record, `bytesValue` as a Buffer.
 */
export const decodeAnyValue = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return undefined
  const v = value as Record<string, any>
  if ("stringValue" in v) return v.stringValue
  if ("boolValue" in v) return v.boolValue
  if ("intValue" in v) {
    const n = typeof v.intValue === "string" ? Number(v.intValue) : v.intValue
    return typeof v.intValue === "string" && !Number.isSafeInteger(n) ? BigInt(v.intValue) : n
  }
  if ("doubleValue" in v) return typeof v.doubleValue === "string" ? Number(v.doubleValue) : v.doubleValue
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as Array<unknown>).map(decodeAnyValue)
  if ("kvlistValue" in v) return decodeAttributes(v.kvlistValue?.values)
  if ("bytesValue" in v) return Buffer.from(String(v.bytesValue), "base64")
  return undefined
}

/** OTLP `KeyValue`s as a record. */
export const decodeAttributes = (attributes: unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (!Array.isArray(attributes)) return out
  for (const attribute of attributes) {
    if (typeof attribute?.key === "string") out[attribute.key] = decodeAnyValue(attribute.value)
  }
  return out
}

const nanos = (value: unknown): string => (value === undefined || value === null ? "" : String(value))

/** The spans of an OTLP/JSON `ExportTraceServiceRequest`, flattened. */
export const decodeTraces = (body: any): Array<ReceivedSpan> => {
  const out: Array<ReceivedSpan> = []
  for (const resourceSpans of body?.resourceSpans ?? []) {
    const resource = decodeAttributes(resourceSpans?.resource?.attributes)
    for (const scopeSpans of resourceSpans?.scopeSpans ?? []) {
      const scope = typeof scopeSpans?.scope?.name === "string" ? scopeSpans.scope.name : undefined
      for (const span of scopeSpans?.spans ?? []) {
        const status: { code: number; message?: string } = { code: Number(span?.status?.code ?? 0) }
        if (typeof span?.status?.message === "string") status.message = span.status.message
        out.push({
          name: String(span?.name),
          traceId: String(span?.traceId),
          spanId: String(span?.spanId),
          parentSpanId: typeof span?.parentSpanId === "string" && span.parentSpanId.length > 0
            ? span.parentSpanId
            : undefined,
          attributes: decodeAttributes(span?.attributes),
          startTimeUnixNano: nanos(span?.startTimeUnixNano),
          endTimeUnixNano: nanos(span?.endTimeUnixNano),
          status,
          kind: typeof span?.kind === "number" ? span.kind : undefined,
          resource,
          scope
        })
      }
    }
  }
  return out
}

/**
 * Starts the receiver on 127.0.0.1. `POST /v1/traces` is answered with `options.status` (200: an
 * empty `ExportTraceServiceResponse`, `{}` or an empty protobuf body); a JSON body that does not
 * parse gets a 400, other paths a 404. Every request is recorded.
 */
export const start = (options: StartOptions = {}): Promise<OtlpReceiver> => {
  const requests: Array<ReceivedRequest> = []
  const spans: Array<ReceivedSpan> = []
  const listeners = new Set<() => void>()

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    const traces = req.method === "POST" && path === "/v1/traces"
    let json: unknown = undefined
    let decoded: Array<ReceivedSpan> = []
    let bad = false
    if (traces && contentType === "application/json") {
      try {
        json = JSON.parse(body.toString("utf8"))
        decoded = decodeTraces(json)
      } catch {
        bad = true
      }
    }
    requests.push({ method: req.method ?? "", path, headers: req.headers, contentType, body, json, spans: decoded })
    spans.push(...decoded)
    for (const listener of listeners) listener()
    if (!traces) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${req.method} ${path}`)
    } else if (bad) {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ message: "invalid JSON" }))
    } else if (contentType === "application/x-protobuf") {
      res.writeHead(options.status ?? 200, { "content-type": "application/x-protobuf", "content-length": "0" }).end()
    } else {
      res.writeHead(options.status ?? 200, { "content-type": "application/json" }).end("{}")
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => res.destroy())
  })

  const waitForSpans = (
    predicate: (spans: ReadonlyArray<ReceivedSpan>) => boolean,
    timeoutMs = 5000
  ): Promise<ReadonlyArray<ReceivedSpan>> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate(spans)) return false
        clearTimeout(timer)
        listeners.delete(check)
        resolve([...spans])
        return true
      }
      const timer = setTimeout(() => {
        listeners.delete(check)
        reject(
          new Error(
            `OtlpReceiver: no matching spans within ${timeoutMs} ms; received ${requests.length} request(s), spans: ${
              JSON.stringify(spans.map((span) => span.name))
            }`
          )
        )
      }, timeoutMs)
      if (!check()) listeners.add(check)
    })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject)
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve({
        url,
        tracesUrl: `${url}/v1/traces`,
        requests: () => [...requests],
        spans: () => [...spans],
        waitForSpans,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

/** {@link start} as a scoped resource: the receiver closes when the scope does. */
export const scoped = (options: StartOptions = {}): Effect.Effect<OtlpReceiver, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (receiver) => Effect.promise(() => receiver.close()))
