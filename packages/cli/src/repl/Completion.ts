/**
 * Tab completion at the prompt: slash commands (the session's and the REPL's own), `/model`
 * aliases, and `@path` mentions (files and folders of the working directory).
 *
 * @since 0.1.0
 */
import { BuiltinCommands, type SlashCommand } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import * as InputLine from "./InputLine.js"

/** Completes the text before the cursor: candidates and the part they replace (readline's shape). @category Models */
export type Completer = (line: string) => [Array<string>, string]

/** The commands the REPL answers itself (the session answers the rest). @category Constants */
export const REPL_COMMANDS: ReadonlyArray<SlashCommand.Command> = [
  { name: "resume", argumentHint: "[session id or number]", description: "List this folder's saved sessions, or switch to one" },
  { name: "status", description: "Show the version, session, model, API, permission mode, MCP servers, context and settings files" },
  { name: "permissions", argumentHint: "[allow|ask|deny <rule> | remove <rule>]", description: "List the permission rules and mode, or add or remove a rule" },
  { name: "mcp", description: "Show the MCP servers, their status and their tools" },
  { name: "memory", argumentHint: "[number, path, user or project]", description: "List the instruction files in the context, or open one in $EDITOR" },
  { name: "exit", description: "Leave Keel (Ctrl+D does too)" }
]

/** Every command name, with its slash: the session's `commands` and the REPL's own. @category Constructors */
export const commandNames = (commands: ReadonlyArray<SlashCommand.Command>): ReadonlyArray<string> =>
  [...commands, ...REPL_COMMANDS].map((c) => `/${c.name}`)

const mentionCandidates = (cwd: string, partial: string): Array<string> => {
  const dir = partial.includes("/") ? partial.slice(0, partial.lastIndexOf("/") + 1) : ""
  const prefix = partial.slice(dir.length)
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(path.resolve(cwd, dir), { withFileTypes: true })
  } catch {
    return []
  }
  return entries
    .filter((e) => e.name.startsWith(prefix) && (prefix.startsWith(".") || !e.name.startsWith(".")))
    .filter((e) => e.name !== "node_modules" || prefix.startsWith("n"))
    .map((e) => `@${dir}${e.name}${e.isDirectory() ? "/" : ""}`)
    .sort()
    .slice(0, 200)
}

/**
 * The completer for a REPL in `cwd` whose session answers `commands`.
 *
 * @category Constructors
 */
export const completer = (cwd: string, commands: ReadonlyArray<SlashCommand.Command>): Completer => {
  const names = commandNames(commands)
  return (line) => complete(cwd, names, line)
}

const complete = (cwd: string, commandNames: ReadonlyArray<string>, line: string): ReturnType<Completer> => {
  if (/^\/\S*$/.test(line)) {
    const hits = commandNames.filter((c) => c.startsWith(line))
    return [hits.length > 0 ? hits.map((h) => `${h} `) : [...commandNames], line]
  }
  const model = /^\/model\s+(\S*)$/.exec(line)
  if (model !== null) {
    const names = [...Object.keys(BuiltinCommands.MODEL_ALIASES), "default"]
    return [names.filter((n) => n.startsWith(model[1]!)), model[1]!]
  }
  const mention = /(?:^|\s)(@[^\s"]*)$/.exec(line)
  if (mention !== null) {
    const word = mention[1]!
    return [mentionCandidates(cwd, word.slice(1)), word]
  }
  return [[], line]
}

/** The longest start all of `words` share. */
const commonStart = (words: ReadonlyArray<string>): string =>
  words.reduce((common, word) => {
    let i = 0
    while (i < common.length && i < word.length && common[i] === word[i]) i++
    return common.slice(0, i)
  })

/**
 * Tab at `line`: a single candidate replaces the word before the cursor; several complete it to
 * the start they share, and when that adds nothing, a second Tab in a row (`again`) lists them.
 *
 * @category Completing
 */
export const tab = (
  line: InputLine.InputLine,
  complete: Completer,
  again: boolean
): { readonly line: InputLine.InputLine; readonly listed?: ReadonlyArray<string> } => {
  const [candidates, word] = complete(InputLine.beforeCursor(line))
  if (candidates.length === 0) return { line }
  const common = candidates.length === 1 ? candidates[0]! : commonStart(candidates)
  if (common.length > word.length && common.startsWith(word)) {
    return { line: InputLine.replaceBefore(line, word.length, common) }
  }
  return again && candidates.length > 1 ? { line, listed: candidates.map((c) => c.trimEnd()) } : { line }
}
