/**
 * Where the model layer gets its API key or token. `current` is what requests use; `refresh`
 * re-reads it from its source (the environment, a helper, a vault) after a 401, so a rotated key is
 * picked up without restarting. The retry layer refreshes once per failed call, then retries.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

/** An API key (sent by the SDK as a bearer token) or an OAuth-style auth token. @category Models */
export interface Auth {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly authToken?: Redacted.Redacted | undefined
}

/** Neither `ANTHROPIC_API_KEY` nor `ANTHROPIC_AUTH_TOKEN` is set. @category Errors */
export class MissingCredentials extends Schema.TaggedError<MissingCredentials>("@keel/AnthropicModel/MissingCredentials")(
  "MissingCredentials",
  { message: Schema.String }
) {}

/** @category Models */
export interface Service {
  /** The credentials requests use now. */
  readonly current: Effect.Effect<Auth>
  /** Re-reads the credentials from their source; later requests use the result. */
  readonly refresh: Effect.Effect<Auth, MissingCredentials>
}

/** @category Context */
export class Credentials extends Context.Tag("@keel/core/Credentials")<Credentials, Service>() {}

const missing = new MissingCredentials({
  message: "ANTHROPIC_API_KEY is not set. Set it to your Anthropic API key (export ANTHROPIC_API_KEY=sk-ant-...), " +
    "or set ANTHROPIC_AUTH_TOKEN, and ANTHROPIC_BASE_URL for a server other than api.anthropic.com."
})

/** Fails with `MissingCredentials` (saying how to set them) when there is neither a key nor a token. @category Guards */
export const require = (auth: Auth): Effect.Effect<Auth, MissingCredentials> =>
  auth.apiKey === undefined && auth.authToken === undefined ? Effect.fail(missing) : Effect.succeed(auth)

/**
 * Credentials read by `load`, once now and again on every `refresh`.
 *
 * @category Constructors
 */
export const make = <E, R>(load: Effect.Effect<Auth, E, R>): Effect.Effect<Service, E | MissingCredentials, R> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<R>()
    const first = yield* Effect.flatMap(load, require)
    const ref = yield* Ref.make(first)
    const reload = Effect.flatMap(load, require).pipe(
      Effect.provide(context),
      Effect.catchAll((e) => (e instanceof MissingCredentials ? Effect.fail(e) : Effect.fail(missing)))
    ) as Effect.Effect<Auth, MissingCredentials>
    return Credentials.of({
      current: Ref.get(ref),
      refresh: Effect.tap(reload, (auth) => Ref.set(ref, auth))
    })
  })

/** Fixed credentials: `refresh` returns them unchanged. @category Layers */
export const layerStatic = (auth: Auth): Layer.Layer<Credentials, MissingCredentials> =>
  Layer.effect(Credentials, make(Effect.succeed(auth)))

/**
 * No credentials to refresh: for a model client that needs none (a scripted model, a local server).
 * `refresh` fails, so the retry layer treats a 401 as final.
 *
 * @category Constructors
 */
export const none: Service = Credentials.of({
  current: Effect.succeed({}),
  refresh: Effect.fail(
    new MissingCredentials({ message: "This model client has no credentials to refresh: the 401 is final." })
  )
})

/** {@link none} as a layer. @category Layers */
export const layerNone: Layer.Layer<Credentials> = Layer.succeed(Credentials, none)

/** `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN`, read through `Config`. @category Configuration */
export const authConfig: Config.Config<Auth> = Config.all({
  apiKey: Config.option(Config.redacted("ANTHROPIC_API_KEY")),
  authToken: Config.option(Config.redacted("ANTHROPIC_AUTH_TOKEN"))
}).pipe(Config.map((o) => ({ apiKey: Option.getOrUndefined(o.apiKey), authToken: Option.getOrUndefined(o.authToken) })))

/**
 * Credentials from the environment (through the current `ConfigProvider`), re-read on `refresh`.
 *
 * @category Layers
 */
export const layerConfig: Layer.Layer<Credentials, MissingCredentials | ConfigError.ConfigError> = Layer.effect(
  Credentials,
  make(authConfig)
)

/** Whether two credentials are the same. @category Predicates */
export const equals = (a: Auth, b: Auth): boolean =>
  (a.apiKey === undefined ? undefined : Redacted.value(a.apiKey)) ===
    (b.apiKey === undefined ? undefined : Redacted.value(b.apiKey)) &&
  (a.authToken === undefined ? undefined : Redacted.value(a.authToken)) ===
    (b.authToken === undefined ? undefined : Redacted.value(b.authToken))
