/**
 * The facts of the machine a session runs on: the working directory, whether it is a git
 * repository, the platform and today's date. The date comes from `Clock` at day precision, so it
 * does not change from one request to the next (and `TestClock` sets it in tests).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as os from "node:os"

/** The environment of a session. @category Models */
export class Environment extends Schema.Class<Environment>("Environment")({
  cwd: Schema.String,
  isGitRepository: Schema.Boolean,
  /** `process.platform` and the OS release, e.g. `linux 6.8.0`. */
  platform: Schema.String,
  /** Today's date (local time), `YYYY-MM-DD`. */
  date: Schema.String
}) {}

/** The local date of `millis` as `YYYY-MM-DD`. @category Rendering */
export const formatDate = (millis: number): string => {
  const d = new Date(millis)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

/** The environment of a session in `cwd`, dated by `Clock`. @category Constructors */
export const collect = (cwd: string, isGitRepository: boolean): Effect.Effect<Environment> =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    new Environment({
      cwd,
      isGitRepository,
      platform: `${process.platform} ${os.release()}`,
      date: formatDate(now)
    }))

/** The environment section of the prompt. @category Rendering */
export const render = (env: Environment): string =>
  [
    "Here is useful information about the environment you are running in:",
    "<env>",
    `Working directory: ${env.cwd}`,
    `Is directory a git repo: ${env.isGitRepository ? "Yes" : "No"}`,
    `Platform: ${env.platform}`,
    `Today's date: ${env.date}`,
    "</env>"
  ].join("\n")
