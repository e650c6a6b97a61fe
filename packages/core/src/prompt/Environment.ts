/**
 * The facts of the machine a session runs on: the working directory, whether it is a git
 * repository, the platform and OS version, the shell the Bash tool runs, today's date and the
 * session's model. The date comes from `Clock` at day precision, so it does not change from one
 * request to the next (and `TestClock` sets it in tests). The section's wording is in
 * `text/environment*.md`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as os from "node:os"
import * as ModelFacts from "./ModelFacts.js"
import * as Texts from "./text/Texts.generated.js"

/** The shell the Bash tool runs commands with. @category Constants */
export const SHELL = "bash"

/** The environment of a session. @category Models */
export class Environment extends Schema.Class<Environment>("Environment")({
  cwd: Schema.String,
  isGitRepository: Schema.Boolean,
  /** `process.platform`, e.g. `linux` (older transcripts hold it with the OS release: `linux 6.8.0`). */
  platform: Schema.String,
  /** The kernel's name and release, e.g. `Linux 6.8.0`. */
  osVersion: Schema.optional(Schema.String),
  /** The shell the Bash tool runs, e.g. `bash`. */
  shell: Schema.optional(Schema.String),
  /** Today's date (local time), `YYYY-MM-DD`. */
  date: Schema.String,
  /** The model id the session started with. */
  model: Schema.optional(Schema.String)
}) {}

/** What {@link collect} is told besides the working directory. @category Models */
export interface Facts {
  readonly isGitRepository: boolean
  /** The session's model id, when known. */
  readonly model?: string | undefined
  /** The platform, OS version and shell to state instead of this machine's (for tests). */
  readonly host?: Host | undefined
}

/** Facts of the host that {@link collect} reads from this machine unless told. @category Models */
export interface Host {
  readonly platform?: string | undefined
  readonly osVersion?: string | undefined
  readonly shell?: string | undefined
}

/** The local date of `millis` as `YYYY-MM-DD`. @category Rendering */
export const formatDate = (millis: number): string => {
  const d = new Date(millis)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

/** The environment of a session in `cwd`, dated by `Clock`. @category Constructors */
export const collect = (cwd: string, facts: Facts): Effect.Effect<Environment> =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    new Environment({
      cwd,
      isGitRepository: facts.isGitRepository,
      platform: facts.host?.platform ?? process.platform,
      osVersion: facts.host?.osVersion ?? `${os.type()} ${os.release()}`,
      shell: facts.host?.shell ?? SHELL,
      date: formatDate(now),
      ...(facts.model !== undefined ? { model: facts.model } : {})
    }))

/** The environment section of the prompt (model facts from `models`). @category Rendering */
export const render = (env: Environment, models: ModelFacts.Table = ModelFacts.defaultTable): string => {
  const lines = [
    Texts.environment({
      cwd: env.cwd,
      isGitRepository: env.isGitRepository ? "yes" : "no",
      platform: env.platform,
      osVersion: env.osVersion ?? "unknown",
      shell: env.shell ?? SHELL,
      date: env.date
    })
  ]
  if (env.model !== undefined) {
    const facts = ModelFacts.of(env.model, models)
    lines.push(Texts.environmentModel({ name: facts.name, id: env.model }))
    if (facts.cutoff !== undefined) lines.push(Texts.environmentCutoff({ cutoff: facts.cutoff }))
  }
  return lines.join("\n")
}
