/**
 * What a permission question shows of the call it asks about, under the call's line: what the call
 * says it does (its `description` field: Bash's, Task's), then exactly what it would do: the whole
 * command for Bash, a unified diff for Edit, MultiEdit and Write (against the file as it is now;
 * cut after a few lines, with how many more), the other inputs as `field: value` lines.
 *
 * @since 0.1.0
 */
import { FileEdits } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Style from "./Style.js"

/** Most diff lines shown before the rest is counted. @category Constants */
export const MAX_DIFF_LINES = 12

/** Most lines of a command shown. @category Constants */
export const MAX_COMMAND_LINES = 8

const fieldsOf = (input: unknown): Record<string, unknown> =>
  typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const readOr = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

interface Replacement {
  readonly old: string
  readonly new: string
  readonly all: boolean
}

const replacementsOf = (toolName: string, fields: Record<string, unknown>): ReadonlyArray<Replacement> => {
  const one = (e: Record<string, unknown>): Replacement => ({
    old: str(e.old_string) ?? "",
    new: str(e.new_string) ?? "",
    all: e.replace_all === true
  })
  if (toolName === "MultiEdit") return Array.isArray(fields.edits) ? fields.edits.map((e) => one(fieldsOf(e))) : []
  return [one(fields)]
}

/**
 * The file before and after the call (Edit, MultiEdit, Write): the file as it is now with the
 * call's changes, or, when an edit's text is not found in it, the edited fragments alone.
 */
const sides = (toolName: string, fields: Record<string, unknown>, file: string): {
  readonly before: string | undefined
  readonly after: string
} => {
  const current = readOr(file)
  if (toolName === "Write") return { before: current, after: str(fields.content) ?? "" }
  const edits = replacementsOf(toolName, fields)
  let after = current
  for (const e of edits) {
    if (after === undefined || e.old === "" || !after.includes(e.old)) {
      after = undefined
      break
    }
    after = e.all ? after.split(e.old).join(e.new) : after.replace(e.old, () => e.new)
  }
  if (current !== undefined && after !== undefined) return { before: current, after }
  const line = (s: string) => (s === "" || s.endsWith("\n") ? s : `${s}\n`)
  return { before: edits.map((e) => line(e.old)).join(""), after: edits.map((e) => line(e.new)).join("") }
}

/**
 * The diff lines of a file-editing call (hunk headers and changed lines with their context), at
 * most `max`, then `… N more lines`; `+` lines green and `-` lines red when colours are on.
 *
 * @category Rendering
 */
export const diffLines = (
  toolName: string,
  input: unknown,
  cwd: string,
  style: Style.Style,
  max: number = MAX_DIFF_LINES
): ReadonlyArray<string> => {
  const fields = fieldsOf(input)
  const target = str(fields.file_path)
  if (target === undefined) return []
  const file = path.resolve(cwd, target)
  const { after, before } = sides(toolName, fields, file)
  const patch = FileEdits.patchOf(file, before, after)
  const body = patch.split("\n").filter((l) => !/^(---|\+\+\+|=+$|Index:|\\ No newline)/.test(l) && l !== "")
  const shown = body.slice(0, max).map((l) =>
    l.startsWith("+") ? style.green(l) : l.startsWith("-") ? style.red(l) : l.startsWith("@@") ? style.cyan(l) : style.dim(l)
  )
  return body.length > max ? [...shown, style.dim(`… ${body.length - max} more lines`)] : shown
}

const EDITING = new Set(["Edit", "MultiEdit", "Write"])

/**
 * The lines under the call's line in a permission question: its description, then the command
 * (Bash), the diff (file edits) or the other input fields, each indented.
 *
 * @category Rendering
 */
export const lines = (toolName: string, input: unknown, cwd: string, style: Style.Style): ReadonlyArray<string> => {
  const fields = fieldsOf(input)
  const out: Array<string> = []
  const description = str(fields.description)?.trim()
  if (description !== undefined && description !== "") out.push(style.italic(description))
  if (toolName === "Bash" && str(fields.command) !== undefined) {
    const command = str(fields.command)!.replace(/\n$/, "").split("\n")
    out.push(...command.slice(0, MAX_COMMAND_LINES).map((l, i) => `${i === 0 ? "$" : " "} ${l}`))
    if (command.length > MAX_COMMAND_LINES) out.push(style.dim(`  … ${command.length - MAX_COMMAND_LINES} more lines`))
  } else if (EDITING.has(toolName)) {
    out.push(...diffLines(toolName, input, cwd, style))
  } else {
    for (const [key, value] of Object.entries(fields)) {
      if (key === "description") continue
      const text = typeof value === "string" ? value : JSON.stringify(value)
      const one = text.replace(/\s+/g, " ")
      out.push(style.dim(`${key}: ${one.length > 90 ? `${one.slice(0, 89)}…` : one}`))
      if (out.length >= MAX_COMMAND_LINES) break
    }
  }
  return out.map((l) => `  ${l}`)
}
