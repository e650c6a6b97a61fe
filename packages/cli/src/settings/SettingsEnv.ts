/**
 * The settings' `env`, applied at start before anything reads the environment. As in Claude Code,
 * a settings value wins over the variable the process started with. A command-line run applies it
 * to `process.env` itself (tools' child processes, the model client and every configuration read
 * see it); a run with an environment of its own (`query()`'s `env`, a `keel serve` session) gets it
 * over that environment, and `process.env` is left alone.
 *
 * @since 0.1.0
 */
import * as ConfigProvider from "effect/ConfigProvider"

/**
 * Applies `env` (the merged settings' variables): over `runEnv` when the run has one (the result is
 * the run's new environment), else to `process.env` (the result is `undefined`: the run still uses
 * `process.env`).
 *
 * @category Applying
 */
export const apply = (
  env: Readonly<Record<string, string>> | undefined,
  runEnv: Readonly<Record<string, string | undefined>> | undefined
): Readonly<Record<string, string | undefined>> | undefined => {
  if (runEnv !== undefined) return env === undefined ? runEnv : { ...runEnv, ...env }
  if (env !== undefined) Object.assign(process.env, env)
  return undefined
}

/**
 * Configuration read from `env` as `ConfigProvider.fromEnv` reads `process.env` (unset keys left out).
 *
 * @category Configuration
 */
export const providerOf = (env: Readonly<Record<string, string | undefined>>): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(
    new Map(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    { pathDelim: "_", seqDelim: "," }
  )
