/**
 * The facts a session's system prompt was built from: the instruction files (their paths, scopes
 * and sizes as read), whether there was memory, the environment and the git state, and which
 * sections were cut to fit their budgets. `ContextAssembly` attaches one to the prompt it makes
 * (`SystemPrompt.context`); the turn envelope records it with every turn, and a resumed session
 * carries it over with the prompt, so that `/context` can say what the model was told and when.
 *
 * The texts themselves are in the prompt's sections (recorded once per session, see
 * `TurnEnvelope`); the snapshot holds the structured facts (git status included, at most
 * `GitContext.STATUS_MAX_CHARS` characters), not a second copy of the instruction files.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Environment } from "./Environment.js"
import { GitContext } from "./GitContext.js"
import type { MemoryFile, Skipped } from "../memory/MemoryFile.js"

/** An instruction file the prompt was built from. @category Models */
export class InstructionSource extends Schema.Class<InstructionSource>("InstructionSource")({
  path: Schema.String,
  /** `project` (shared), `local` (the user's private file for the project: `CLAUDE.local.md`) or `user` (for every project). */
  scope: Schema.Literal("project", "user", "local"),
  /** The characters read (before the instructions' budget). */
  chars: Schema.Int,
  /** The instruction file that imported this one (`@path`), if it was imported. */
  importedFrom: Schema.optional(Schema.String)
}) {}

/** An `@path` import that was not followed, and why. @category Models */
export class SkippedImport extends Schema.Class<SkippedImport>("SkippedImport")({
  path: Schema.String,
  importedFrom: Schema.String,
  reason: Schema.String
}) {}

/** A section of the dynamic part that can be cut to its budget. @category Models */
export const Cut = Schema.Literal("instructions", "memory", "environment")

/** The facts of one assembly. @category Models */
export class ContextSnapshot extends Schema.Class<ContextSnapshot>("ContextSnapshot")({
  /** The instruction files, in the order the prompt lists them (the user's first, the working directory's last). */
  instructions: Schema.Array(InstructionSource),
  /** The imports that were not followed (missing, outside the working directory, over the size cap). */
  skippedImports: Schema.optional(Schema.Array(SkippedImport)),
  /** Whether the embedder's memory gave a section. */
  memory: Schema.Boolean,
  /** The environment (working directory, platform, shell, the day's date, the session's model). */
  environment: Environment,
  /** The git facts, inside a repository where git answered. */
  git: Schema.optional(GitContext),
  /** The sections cut to fit the prompt's budgets. */
  cut: Schema.Array(Cut)
}) {}

/** The snapshot of an assembly's facts. @category Constructors */
export const make = (facts: {
  readonly files: ReadonlyArray<MemoryFile>
  readonly skipped?: ReadonlyArray<Skipped> | undefined
  readonly memory: boolean
  readonly environment: Environment
  readonly git: GitContext | undefined
  readonly cut: ReadonlyArray<typeof Cut.Type>
}): ContextSnapshot =>
  new ContextSnapshot({
    instructions: facts.files.map((f) =>
      new InstructionSource({
        path: f.path,
        scope: f.scope,
        chars: f.content.length,
        ...(f.importedFrom !== undefined ? { importedFrom: f.importedFrom } : {})
      })
    ),
    ...(facts.skipped !== undefined && facts.skipped.length > 0
      ? { skippedImports: facts.skipped.map((s) => new SkippedImport(s)) }
      : {}),
    memory: facts.memory,
    environment: facts.environment,
    ...(facts.git !== undefined ? { git: facts.git } : {}),
    cut: facts.cut
  })

/**
 * The snapshot in a few lines, for people (`/context`): the instruction files, the environment and
 * the git state it holds.
 *
 * @category Rendering
 */
export const describe = (snapshot: ContextSnapshot): ReadonlyArray<string> => {
  const files = snapshot.instructions.length === 0
    ? "none"
    : snapshot.instructions.map((f) =>
      `${f.path}${f.scope === "user" ? " (yours)" : f.scope === "local" ? " (private)" : ""}`
    ).join(", ")
  const env = snapshot.environment
  const lines = [
    `Instruction files: ${files}`,
    `Environment: ${[env.cwd, env.osVersion ?? env.platform, env.shell, env.date, env.model].filter((f) => f !== undefined).join(" · ")}`
  ]
  const git = snapshot.git
  if (git !== undefined) {
    const changed = git.status.length === 0 ? 0 : git.status.split("\n").length
    const last = git.recentCommits.split("\n")[0]
    lines.push(
      `Git: ${git.branch ?? "(detached HEAD)"} · ${changed === 0 ? "clean" : `${changed}${git.statusCut ? "+" : ""} changed`}` +
        (last !== undefined && last.length > 0 ? ` · last commit ${last}` : "")
    )
  }
  const skipped = snapshot.skippedImports ?? []
  if (skipped.length > 0) {
    lines.push(`Imports not followed: ${skipped.map((s) => `${s.path} from ${s.importedFrom} (${s.reason})`).join(", ")}`)
  }
  if (snapshot.memory) lines.push("Memory: yes")
  if (snapshot.cut.length > 0) lines.push(`Cut to fit the budget: ${snapshot.cut.join(", ")}`)
  return lines
}
