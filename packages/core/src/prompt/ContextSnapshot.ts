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
import type { InstructionFile } from "./ProjectInstructions.js"

/** An instruction file the prompt was built from. @category Models */
export class InstructionSource extends Schema.Class<InstructionSource>("InstructionSource")({
  path: Schema.String,
  /** `project` (the working directory up to the repository root) or `user` (`$KEEL_HOME/KEEL.md`). */
  scope: Schema.Literal("project", "user"),
  /** The characters read (before the instructions' budget). */
  chars: Schema.Int
}) {}

/** A section of the dynamic part that can be cut to its budget. @category Models */
export const Cut = Schema.Literal("instructions", "memory", "environment")

/** The facts of one assembly. @category Models */
export class ContextSnapshot extends Schema.Class<ContextSnapshot>("ContextSnapshot")({
  /** The instruction files, in the order the prompt lists them (nearest first, the user's last). */
  instructions: Schema.Array(InstructionSource),
  /** Whether the embedder's memory gave a section. */
  memory: Schema.Boolean,
  /** The environment (working directory, platform, the day's date). */
  environment: Environment,
  /** The git facts, inside a repository where git answered. */
  git: Schema.optional(GitContext),
  /** The sections cut to fit the prompt's budgets. */
  cut: Schema.Array(Cut)
}) {}

/** The snapshot of an assembly's facts. @category Constructors */
export const make = (facts: {
  readonly files: ReadonlyArray<InstructionFile>
  readonly memory: boolean
  readonly environment: Environment
  readonly git: GitContext | undefined
  readonly cut: ReadonlyArray<typeof Cut.Type>
}): ContextSnapshot =>
  new ContextSnapshot({
    instructions: facts.files.map((f) => new InstructionSource({ path: f.path, scope: f.scope, chars: f.content.length })),
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
    : snapshot.instructions.map((f) => `${f.path}${f.scope === "user" ? " (yours)" : ""}`).join(", ")
  const env = snapshot.environment
  const lines = [
    `Instruction files: ${files}`,
    `Environment: ${env.cwd} · ${env.platform} · ${env.date}`
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
  if (snapshot.memory) lines.push("Memory: yes")
  if (snapshot.cut.length > 0) lines.push(`Cut to fit the budget: ${snapshot.cut.join(", ")}`)
  return lines
}
