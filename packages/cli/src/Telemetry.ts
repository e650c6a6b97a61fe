/**
 * Optional OpenTelemetry tracing: with an OTLP endpoint in the environment, every span of the run is
 * exported over OTLP/HTTP (`@effect/opentelemetry`'s `OtlpTracer` on `fetch`, not the OpenTelemetry
 * SDK). Without one the layer is empty and the exporter is never loaded: it is imported dynamically,
 * so the bundle keeps it in a chunk of its own.
 *
 * The variables are the standard ones, read through Effect `Config` (so the current
 * `ConfigProvider`, e.g. `query()`'s `env`, is honoured):
 *
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: the full traces URL, used as given;
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: a base URL, traces go to `<base>/v1/traces`;
 * - `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (wins per key): `k=v,k2=v2`,
 *   values URL-decoded;
 * - `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (wins): `http/json`
 *   (the default here) or `http/protobuf`; `grpc` is not supported;
 * - `OTEL_SERVICE_NAME` (default: `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `keel`);
 *   the other `OTEL_RESOURCE_ATTRIBUTES` are added to the resource;
 * - `OTEL_SDK_DISABLED=true`: no tracing whatever else is set.
 *
 * An empty variable counts as unset, as the OpenTelemetry specification says.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type { ConfigError } from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * A telemetry variable whose value cannot be used; `variable` names it, `message` says what is wrong
 * (without repeating header values, which often hold credentials).
 *
 * @since 0.1.0
 * @category Errors
 */
export class InvalidTelemetryConfig extends Schema.TaggedError<InvalidTelemetryConfig>(
  "@keel/cli/InvalidTelemetryConfig"
)("InvalidTelemetryConfig", {
  variable: Schema.String,
  message: Schema.String
}) {}

/**
 * The OTLP/HTTP encodings the exporter speaks.
 *
 * @since 0.1.0
 * @category Models
 */
export type Protocol = "http/json" | "http/protobuf"

/**
 * What the exporter is built from.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** The full OTLP/HTTP traces URL spans are POSTed to. */
  readonly url: string
  /** Extra request headers (authentication, tenant). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The resource's `service.name` (default `keel`). */
  readonly serviceName?: string | undefined
  /** The resource's `service.version` (default {@link serviceVersion}). */
  readonly serviceVersion?: string | undefined
  /** Default `http/json`. */
  readonly protocol?: Protocol | undefined
  /** How often ended spans are sent while the run goes on (default {@link defaultExportInterval}). */
  readonly exportInterval?: Duration.DurationInput | undefined
  /** How long closing the layer waits for the last spans to be sent (default {@link defaultShutdownTimeout}). */
  readonly shutdownTimeout?: Duration.DurationInput | undefined
}

/**
 * Keel's `service.version`.
 *
 * @since 0.1.0
 * @category Configuration
 */
export const serviceVersion = "0.1.0"

/**
 * The export interval: spans that ended are sent this often while a run goes on; whatever is left
 * is sent when the layer closes, so a short run does not wait for it.
 *
 * @since 0.1.0
 * @category Configuration
 */
export const defaultExportInterval: Duration.Duration = Duration.seconds(5)

/**
 * The bound on the final flush when the layer closes. A receiver that is down costs a run at most
 * this much (its spans are dropped, silently); a reachable one has time for one retry (the exporter
 * retries a failed request after 1 s).
 *
 * @since 0.1.0
 * @category Configuration
 */
export const defaultShutdownTimeout: Duration.Duration = Duration.seconds(2)

/** The exporter's modules, loaded only when there is somewhere to export to. */
const load = () =>
  Promise.all([
    import("@effect/opentelemetry/OtlpTracer"),
    import("@effect/opentelemetry/OtlpSerialization"),
    import("@effect/platform/FetchHttpClient")
  ])

/**
 * Installs the OTLP tracer for everything the layer is provided to: spans are exported in batches
 * (every {@link Options.exportInterval}, and at the layer's close, within
 * {@link Options.shutdownTimeout}). Export failures are never the run's: a failed export drops its
 * spans and pauses exporting for a minute.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<never> =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(load), ([OtlpTracer, OtlpSerialization, FetchHttpClient]) =>
      OtlpTracer.layer({
        url: options.url,
        headers: options.headers,
        resource: {
          serviceName: options.serviceName ?? "keel",
          serviceVersion: options.serviceVersion ?? serviceVersion
        },
        exportInterval: options.exportInterval ?? defaultExportInterval,
        shutdownTimeout: options.shutdownTimeout ?? defaultShutdownTimeout
      }).pipe(
        Layer.provide(
          options.protocol === "http/protobuf" ? OtlpSerialization.layerProtobuf : OtlpSerialization.layerJson
        ),
        Layer.provide(FetchHttpClient.layer)
      ))
  )

/** A variable, trimmed; empty counts as unset. */
const variable = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(
    Config.map((value) => Option.filter(Option.map(value, (s) => s.trim()), (s) => s.length > 0))
  )

const invalid = (name: string, message: string) =>
  new InvalidTelemetryConfig({ variable: name, message: `invalid environment: ${name}: ${message}` })

/** An http(s) URL, or the error naming the variable. */
const parseUrl = (name: string, value: string): Effect.Effect<URL, InvalidTelemetryConfig> => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return Effect.fail(invalid(name, `${JSON.stringify(value)} is not a URL (e.g. http://localhost:4318)`))
  }
  return url.protocol === "http:" || url.protocol === "https:"
    ? Effect.succeed(url)
    : Effect.fail(
      invalid(name, `${JSON.stringify(value)} is not an http:// or https:// URL (OTLP over gRPC is not supported)`)
    )
}

/** RFC 9110 token characters, what a header name may be made of. */
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** `k=v,k2=v2` with URL-encoded values, as the OpenTelemetry specification defines the headers variables. */
const parseHeaders = (name: string, value: string): Effect.Effect<Record<string, string>, InvalidTelemetryConfig> => {
  const headers: Record<string, string> = {}
  const entries = value.split(",")
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!.trim()
    if (entry.length === 0) continue
    const at = entry.indexOf("=")
    // Not even a key is repeated: an entry without "=" may well be a bare token.
    if (at < 0) return Effect.fail(invalid(name, `entry ${i + 1} has no "=": expected key=value,key2=value2`))
    const key = entry.slice(0, at).trim()
    if (!headerName.test(key)) {
      return Effect.fail(invalid(name, `entry ${i + 1}: ${JSON.stringify(key)} is not a header name`))
    }
    let decoded: string
    try {
      decoded = decodeURIComponent(entry.slice(at + 1).trim())
    } catch {
      return Effect.fail(invalid(name, `the value of ${key} is not validly URL-encoded`))
    }
    if (/[\r\n\0]/.test(decoded)) {
      return Effect.fail(invalid(name, `the value of ${key} holds a line break or NUL once decoded`))
    }
    headers[key.toLowerCase()] = decoded
  }
  return Effect.succeed(headers)
}

const parseProtocol = (name: string, value: string): Effect.Effect<Protocol, InvalidTelemetryConfig> =>
  value === "http/json" || value === "http/protobuf"
    ? Effect.succeed(value)
    : Effect.fail(invalid(
      name,
      `${JSON.stringify(value)} is not supported: use http/json or http/protobuf${value === "grpc" ? " (no gRPC)" : ""}`
    ))

/** `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, read as `@effect/opentelemetry` reads that variable. */
const resourceServiceName = (attributes: string): string | undefined => {
  for (const entry of attributes.split(",")) {
    const parts = entry.split("=")
    if (parts.length === 2 && parts[0]!.trim() === "service.name") return parts[1]!.trim()
  }
  return undefined
}

const variables = Config.all({
  disabled: variable("OTEL_SDK_DISABLED"),
  endpoint: variable("OTEL_EXPORTER_OTLP_ENDPOINT"),
  tracesEndpoint: variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  headers: variable("OTEL_EXPORTER_OTLP_HEADERS"),
  tracesHeaders: variable("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  protocol: variable("OTEL_EXPORTER_OTLP_PROTOCOL"),
  tracesProtocol: variable("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  serviceName: variable("OTEL_SERVICE_NAME"),
  resourceAttributes: variable("OTEL_RESOURCE_ATTRIBUTES")
})

/**
 * The exporter's {@link Options} from the environment, or `undefined` when there is nothing to
 * export to (no endpoint, or `OTEL_SDK_DISABLED=true`); then nothing else is read or checked.
 *
 * @since 0.1.0
 * @category Configuration
 */
export const optionsFromConfig: Effect.Effect<Options | undefined, InvalidTelemetryConfig | ConfigError> = Effect.gen(
  function*() {
    const env = yield* variables
    // The specification's booleans: "true" in any case is true, anything else false.
    if (Option.getOrUndefined(env.disabled)?.toLowerCase() === "true") return undefined
    let url: string
    if (Option.isSome(env.tracesEndpoint)) {
      url = (yield* parseUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env.tracesEndpoint.value)).href
    } else if (Option.isSome(env.endpoint)) {
      const base = yield* parseUrl("OTEL_EXPORTER_OTLP_ENDPOINT", env.endpoint.value)
      base.pathname = `${base.pathname.replace(/\/+$/, "")}/v1/traces`
      url = base.href
    } else {
      return undefined
    }
    const headers = {
      ...(Option.isSome(env.headers) ? yield* parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", env.headers.value) : {}),
      ...(Option.isSome(env.tracesHeaders)
        ? yield* parseHeaders("OTEL_EXPORTER_OTLP_TRACES_HEADERS", env.tracesHeaders.value)
        : {})
    }
    const protocol = Option.isSome(env.tracesProtocol)
      ? yield* parseProtocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", env.tracesProtocol.value)
      : Option.isSome(env.protocol)
      ? yield* parseProtocol("OTEL_EXPORTER_OTLP_PROTOCOL", env.protocol.value)
      : "http/json"
    const serviceName = Option.getOrUndefined(env.serviceName) ??
      Option.flatMapNullable(env.resourceAttributes, resourceServiceName).pipe(Option.getOrUndefined) ??
      "keel"
    return { url, headers, protocol, serviceName, serviceVersion }
  }
)

/**
 * {@link layer} from the environment (see the module's description); `Layer.empty`, with nothing
 * loaded, when no endpoint is set or `OTEL_SDK_DISABLED=true`. Provide it around the whole run so
 * that its close, which sends the last spans, comes after everything else's.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig: Layer.Layer<never, InvalidTelemetryConfig | ConfigError> = Layer.unwrapEffect(
  Effect.map(optionsFromConfig, (options) => options === undefined ? Layer.empty : layer(options))
)
