/**
 * The `apiKeyHelper` setting, as Claude Code runs it: a shell command (`/bin/sh -c`, in the working
 * directory, stdin empty) whose stdout, trimmed, is the API key, sent as `x-api-key`. It runs at
 * start when the environment has neither `ANTHROPIC_API_KEY` nor `ANTHROPIC_AUTH_TOKEN` (those win),
 * and once more after a 401 (the retry layer refreshes the `Credentials` once per failed call, then
 * retries the request with the new key). A helper that fails, prints nothing or runs past its
 * timeout is an {@link ApiKeyHelperFailed} naming the setting and the file it came from; it is
 * killed with its children at the timeout.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import { AnthropicModel, Credentials, type ModelCapabilities } from "@keel/core"
import type { ModelClient } from "@keel/core"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** How long the helper may run, as Claude Code allows it (10 minutes). @category Constants */
export const DEFAULT_TIMEOUT: Duration.Duration = Duration.minutes(10)

/** How long a helper killed at its timeout gets to exit after SIGTERM, before SIGKILL. */
const KILL_GRACE = Duration.seconds(2)

/** Most bytes of the helper's stderr quoted in an error. */
const STDERR_QUOTED = 500

/** The helper to run. @category Models */
export interface Helper {
  /** The shell command. */
  readonly command: string
  /** The settings file it came from (or `--settings`), named in errors. */
  readonly source: string
  /** Where it runs (the session's working directory). */
  readonly cwd: string
  /** Its environment, over `process.env` (default: `process.env` alone). */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Default {@link DEFAULT_TIMEOUT}. */
  readonly timeout?: Duration.DurationInput | undefined
}

/** The helper did not give a key: it failed, printed nothing, or timed out. @category Errors */
export class ApiKeyHelperFailed extends Schema.TaggedError<ApiKeyHelperFailed>("@keel/cli/ApiKeyHelperFailed")(
  "ApiKeyHelperFailed",
  { source: Schema.String, command: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `apiKeyHelper (${this.source}) ${this.reason}: ${this.command}. ` +
      "Fix the command so it prints the API key on stdout, or set ANTHROPIC_API_KEY."
  }
}

const quoted = (stderr: string): string => {
  const text = stderr.trim()
  if (text === "") return ""
  return ` (stderr: ${text.length > STDERR_QUOTED ? `${text.slice(0, STDERR_QUOTED)}...` : text})`
}

/**
 * Runs the helper once: its trimmed stdout, or {@link ApiKeyHelperFailed}. Bounded by its timeout
 * (under the `Clock`, so a test drives it): then it is killed with its children.
 *
 * @category Running
 */
export const run = (helper: Helper): Effect.Effect<string, ApiKeyHelperFailed, CommandExecutor.CommandExecutor> => {
  const fail = (reason: string) => new ApiKeyHelperFailed({ source: helper.source, command: helper.command, reason })
  const timeout = Duration.decode(helper.timeout ?? DEFAULT_TIMEOUT)
  const base = Command.make("/bin/sh", "-c", helper.command).pipe(
    Command.workingDirectory(helper.cwd),
    Command.stdin(Stream.empty)
  )
  const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
    Effect.fork(Stream.mkString(Stream.decodeText(stream)).pipe(Effect.orElseSucceed(() => "")))
  // The timeout covers the start too; at the timeout the helper is killed with its children.
  const exited = Effect.gen(function*() {
    const proc = yield* Command.start(helper.env === undefined ? base : Command.env(base, helper.env)).pipe(
      Effect.mapError((e) => fail(`could not be started (${e.message})`))
    )
    const output = Fiber.zip(yield* collect(proc.stdout), yield* collect(proc.stderr))
    const exit = yield* Effect.either(proc.exitCode).pipe(
      Effect.onInterrupt(() =>
        proc.kill("SIGTERM").pipe(
          Effect.timeout(KILL_GRACE),
          Effect.catchAll(() => Effect.ignore(proc.kill("SIGKILL")))
        )
      )
    )
    const [out, err] = yield* Fiber.join(output)
    return { exit, out, err }
  })
  return Effect.scoped(Effect.gen(function*() {
    const done = yield* Effect.timeoutOption(exited, timeout)
    if (Option.isNone(done)) return yield* fail(`timed out after ${Duration.format(timeout)} and was killed`)
    const { err, exit, out } = done.value
    if (exit._tag === "Left") return yield* fail(`failed (${exit.left.message})${quoted(err)}`)
    const code = Number(exit.right)
    if (code !== 0) return yield* fail(`exited with code ${code}${quoted(err)}`)
    const key = out.trim()
    if (key === "") return yield* fail(`printed no key${quoted(err)}`)
    return key
  }))
}

/**
 * `Credentials` from the helper: run now, and again on each `refresh` (after a 401). A refresh that
 * fails is logged as a warning (the 401 then stands) and keeps the old key.
 *
 * @category Constructors
 */
export const credentials = (
  helper: Helper
): Effect.Effect<Credentials.Service, ApiKeyHelperFailed, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<CommandExecutor.CommandExecutor>()
    const load = Effect.map(run(helper), (key): Credentials.Auth => ({ apiKey: Redacted.make(key) }))
    let current = yield* load
    return Credentials.Credentials.of({
      current: Effect.sync(() => current),
      refresh: load.pipe(
        Effect.provide(context),
        Effect.tap((auth) => Effect.sync(() => (current = auth))),
        Effect.tapError((e) => Effect.logWarning(e.message)),
        Effect.mapError((e) => new Credentials.MissingCredentials({ message: e.message }))
      )
    })
  })

/**
 * The `Credentials` of a run with an `apiKeyHelper`: `ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN`
 * when the environment has one (re-read on refresh, as without a helper), else the helper's key.
 *
 * @category Layers
 */
export const layerCredentials = (
  helper: Helper
): Layer.Layer<
  Credentials.Credentials,
  ApiKeyHelperFailed | Credentials.MissingCredentials | ConfigError.ConfigError,
  CommandExecutor.CommandExecutor
> =>
  Layer.effect(
    Credentials.Credentials,
    Effect.flatMap(
      Credentials.authConfig,
      (auth): Effect.Effect<
        Credentials.Service,
        ApiKeyHelperFailed | Credentials.MissingCredentials | ConfigError.ConfigError,
        CommandExecutor.CommandExecutor
      > =>
        auth.apiKey !== undefined || auth.authToken !== undefined
          ? Credentials.make(Credentials.authConfig)
          : credentials(helper)
    )
  )

/**
 * The Anthropic model client whose key comes from the helper (see {@link layerCredentials}), the
 * other client options from the environment (`ANTHROPIC_BASE_URL`, `API_TIMEOUT_MS`).
 *
 * @category Layers
 */
export const modelLayer = (
  helper: Helper
): Layer.Layer<
  ModelClient.ModelClient | Credentials.Credentials,
  ApiKeyHelperFailed | Credentials.MissingCredentials | ConfigError.ConfigError | ModelCapabilities.InvalidModels,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem
> =>
  Layer.unwrapEffect(Effect.map(AnthropicModel.optionsWithModels, AnthropicModel.layerWithCredentials)).pipe(
    Layer.provideMerge(layerCredentials(helper))
  )
