/**
 * `/init`: a model turn that studies the repository and writes its instruction file for agents,
 * with the tools the session already has (Read, Glob, Grep, Bash to look; Write or Edit to write,
 * asked like any other edit). The file is `AGENTS.md`, unless the folder already uses `CLAUDE.md`
 * (or `.claude/CLAUDE.md`) and has no `AGENTS.md`: then that one. An existing file is improved, not
 * replaced: the instruction tells the model to read it first, keep what is still true, and say what
 * it changed. Which file exists is read from the instruction files the session's context was built
 * from (a file made since is still read before it is written: the prompt says to look first).
 * `/init focus` adds the user's words to the instruction.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import { expand } from "./CommandArguments.js"
import { type Command, type CommandContext, CommandResult } from "./Commands.js"

/** The file `/init` writes, and whether it was there already. @category Models */
export interface Target {
  /** Relative to the working directory (`AGENTS.md`). */
  readonly file: string
  readonly exists: boolean
}

/**
 * Which file to write, given the instruction files loaded from the working directory (their paths
 * relative to it): `AGENTS.md` when it exists or nothing does; else the `CLAUDE.md` already used.
 *
 * @category Deciding
 */
export const targetOf = (loaded: ReadonlyArray<string>): Target => {
  if (loaded.includes("AGENTS.md")) return { file: "AGENTS.md", exists: true }
  const claude = ["CLAUDE.md", nodePath.join(".claude", "CLAUDE.md")].find((f) => loaded.includes(f))
  return claude !== undefined ? { file: claude, exists: true } : { file: "AGENTS.md", exists: false }
}

/** The instruction of the turn, for `target`. @category Rendering */
export const instruction = (target: Target): string =>
  [
    `Study this repository and ${target.exists ? "improve" : "write"} ${target.file}: the file coding agents read first when they`,
    "work here. It should let a newcomer (human or agent) be productive in minutes. Investigate before writing:",
    "",
    "1. Look at the layout (Glob), the manifests and build files (package.json, Cargo.toml, pyproject.toml, Makefile, go.mod, ...),",
    "   the README, CI configuration and any existing agent or editor rules (.cursor/rules, .github/copilot-instructions.md,",
    "   CONTRIBUTING.md); use Grep and Read to confirm what you infer.",
    "2. Write down, concisely and only what is true of this repository:",
    "   - the commands to install, build, lint, type-check and test, including how to run a single test;",
    "   - the architecture in a few lines: the main modules or packages, how they fit together, where to start reading;",
    "   - conventions that are not obvious from one file (style, error handling, naming, where tests live);",
    "   - pitfalls a newcomer would hit.",
    "   Leave out generic advice, long file listings and anything a quick look at the code already shows.",
    target.exists
      ? `3. ${target.file} already exists: Read it first, keep what is still right, correct what is wrong, add what is missing, ` +
        "and edit it in place (Edit) rather than rewriting it; do not drop the author's own notes."
      : `3. Create ${target.file} at the root of the working directory with the Write tool. If it exists by the time you write ` +
        "(check first), Read it and extend it instead of replacing it.",
    `4. Finish with a short summary of what you ${target.exists ? "changed" : "wrote"}.`
  ].join("\n")

/** The files of `context`'s instruction files that are in the working directory, relative to it. */
const loadedHere = (context: CommandContext): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(context.nextContext, ({ context: info }) => {
    const snapshot = info.snapshot
    if (snapshot === undefined) return []
    const cwd = snapshot.environment.cwd
    return snapshot.instructions.map((f) => nodePath.relative(cwd, f.path))
  })

/** The `/init` command. @category Commands */
export const command: Command = {
  name: "init",
  argumentHint: "[focus]",
  description: "Write an AGENTS.md for this repository (or improve the AGENTS.md or CLAUDE.md it has), by a model turn",
  source: "builtin",
  run: (args, context) =>
    Effect.map(loadedHere(context), (loaded) => CommandResult.Prompt({ prompt: expand("init", instruction(targetOf(loaded)), args) }))
}
