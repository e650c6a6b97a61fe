/**
 * `/memory`: the instruction files in the session's context, numbered: those its system prompt was
 * built from (the user's, then the project's from the repository root down, and what they import),
 * then the nested ones a tool call brought in during the conversation, each with its scope and
 * size, and where the user's and the project's own files are (as Claude Code's menu shows them, loaded
 * or not). `/memory <number or path>` opens one in `$VISUAL` or `$EDITOR` when set (the input line
 * set aside meanwhile), and otherwise prints its path to open by hand; `/memory user` is the user's
 * `$KEEL_HOME/KEEL.md`, `/memory project` the project's `AGENTS.md` (or the `CLAUDE.md` it uses). The context is built when the
 * session starts: `/context refresh` reads the edited files again for the next turns. The REPL
 * answers it: the editor runs in its terminal.
 *
 * @since 0.1.0
 */
import { ContextManagement, NestedMemory, type Session } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import type { Answer, Context } from "./LocalCommands.js"
import { shown } from "./ShownPath.js"

/** An instruction file in the context. @category Models */
export interface Entry {
  readonly path: string
  /** `user`, `project`, `local`, or `nested` (brought in by a tool call). */
  readonly scope: string
  readonly chars: number
  readonly importedFrom?: string | undefined
}

/** The instruction files of `session`'s context, in order. @category Reading */
export const entries = (session: Session.Service): Effect.Effect<ReadonlyArray<Entry>> =>
  Effect.gen(function*() {
    const prompt = yield* session.systemPrompt
    const loaded: Array<Entry> = (prompt.context?.instructions ?? []).map((f) => ({
      path: f.path,
      scope: f.scope,
      chars: f.chars,
      importedFrom: f.importedFrom
    }))
    const messages = yield* Ref.get((yield* session.state).messages)
    const nested = NestedMemory.sentIn(messages).filter((p) => !loaded.some((e) => e.path === p))
    return [...loaded, ...[...new Set(nested)].map((path) => ({ path, scope: "nested", chars: charsOf(path) }))]
  })

const charsOf = (file: string): number => {
  try {
    return fs.readFileSync(file, "utf8").length
  } catch {
    return 0
  }
}

const SCOPES: Readonly<Record<string, string>> = {
  user: "yours, every project",
  project: "project",
  local: "project, private",
  nested: "nested, read during the conversation"
}

/** The user's own instruction file (`$KEEL_HOME/KEEL.md`). */
const userFile = Effect.map(Effect.orElseSucceed(ContextManagement.homeConfig, () => "~/.keel"), (home) => nodePath.join(home, "KEEL.md"))

/** The project's instruction file: the `CLAUDE.md` it uses when it has no `AGENTS.md`, else `AGENTS.md`. */
const projectFile = (files: ReadonlyArray<Entry>, cwd: string): string => {
  const here = (name: string) => files.find((f) => f.path === nodePath.join(cwd, name))
  return (here("AGENTS.md") ?? here("CLAUDE.md") ?? here(nodePath.join(".claude", "CLAUDE.md")))?.path ?? nodePath.join(cwd, "AGENTS.md")
}

const list = (context: Context): Answer =>
  Effect.gen(function*() {
    const { style } = context
    const files = yield* entries(context.session)
    const user = yield* userFile
    const where = style.dim(
      `Project instructions: ${shown(projectFile(files, context.cwd), context.cwd)} (/memory project) · ` +
        `yours, for every project: ${user} (/memory user)`
    )
    if (files.length === 0) {
      return `No instruction files are in the context.\n${where}\n` + style.dim("/init writes AGENTS.md for this project from its code.")
    }
    const width = String(files.length).length
    const lines = [style.bold("Instruction files in the context")]
    files.forEach((f, i) => {
      const from = f.importedFrom !== undefined ? `, imported by ${shown(f.importedFrom, context.cwd)}` : ""
      lines.push(
        `  ${String(i + 1).padStart(width)}. ${shown(f.path, context.cwd)}  ` +
          style.dim(`${SCOPES[f.scope] ?? f.scope}${from} · ${f.chars.toLocaleString("en-US")} chars`)
      )
    })
    lines.push("", where, style.dim("/memory <number or path> opens one in $EDITOR; /context refresh reads the files again for the next turns."))
    return lines.join("\n")
  })

const open = (arg: string, context: Context): Answer =>
  Effect.gen(function*() {
    const { style } = context
    const files = yield* entries(context.session)
    const n = Number(arg)
    if (Number.isInteger(n) && !/^\D/.test(arg) && (n < 1 || n > files.length)) {
      return style.red(`No instruction file ${arg}: /memory lists ${files.length === 0 ? "none" : `1 to ${files.length}`}.`)
    }
    const file = arg === "user"
      ? yield* userFile
      : arg === "project"
      ? projectFile(files, context.cwd)
      : Number.isInteger(n)
      ? files[n - 1]!.path
      : nodePath.resolve(context.cwd, arg)
    const editor = context.env.VISUAL ?? context.env.EDITOR
    if (editor === undefined || editor.trim() === "" || context.edit === undefined) {
      return `${file}\n` + style.dim("Set $EDITOR (or $VISUAL) to open it from here; /context refresh reads it again once edited.")
    }
    const code = context.edit(editor, file)
    return code === 0
      ? `Edited ${shown(file, context.cwd)} with ${editor}.` + style.dim(" /context refresh reads it again for the next turns.")
      : style.red(`${editor} exited with code ${code} on ${file}.`)
  })

/** Answers `/memory [number or path]`. @category Running */
export const run = (args: string, context: Context): Answer => (args === "" ? list(context) : open(args, context))
