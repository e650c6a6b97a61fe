/**
 * What a session's file tools did to files, as unified diffs computed from the recorded calls
 * alone: `Write` (`file_path`, `content`), `Edit` (`old_string`, `new_string`, `replace_all`),
 * `MultiEdit` (`edits`) and, as a source of a file's content, `Read` (a whole-file read's numbered
 * lines). The files themselves are never read: a diff shows what the session recorded, even when
 * the file has changed since.
 *
 * Each call's diff is against the file's content before it when the transcript holds it (a `Write`
 * before, a whole-file `Read`, earlier edits applied in order): then it is the whole file's diff,
 * with its line numbers. Otherwise an `Edit` shows its own fragment (`old_string` → `new_string`,
 * line numbers counted from the fragment), and a `Write` the new content against an empty file. A
 * content read back from `Read` is taken to end with a newline (Read does not show whether it did).
 * A call that did not apply (denied, failed) still gets the diff it asked for, marked not applied;
 * only applied calls move the content on. Diffs are made by `jsdiff` (the `diff` package).
 *
 * @since 0.1.0
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff"
import * as Schema from "effect/Schema"
import * as nodePath from "node:path"

/**
 * What a call's diff is against: `created` (a new file), `recorded` (the file's content before, as
 * recorded), `fragment` (only `old_string` → `new_string`: the content before is not recorded),
 * `unknown` (a `Write` over content not recorded: shown against an empty file).
 *
 * @category Schemas
 */
export const Baseline = Schema.Literal("created", "recorded", "fragment", "unknown")

/** The change one call made, or asked to make, to a file. @category Schemas */
export const FileEdit = Schema.Struct({
  /** The file, absolute. */
  file: Schema.String,
  baseline: Baseline,
  /** Whether the call succeeded (a denied or failed call changed nothing). */
  applied: Schema.Boolean,
  /** The unified diff (`--- old`, `+++ new`, hunks). */
  patch: Schema.String
})

/** @category Models */
export type FileEdit = typeof FileEdit.Type

/** A file the session changed: the calls that changed it, and the net diff when it can be told. @category Schemas */
export const FileChange = Schema.Struct({
  file: Schema.String,
  /** The `tool_use` ids of the calls that changed it, in order. */
  calls: Schema.Array(Schema.String),
  /** The session created it. */
  created: Schema.Boolean,
  /** From its content before the first change to after the last, when every step is recorded; else `null`. */
  patch: Schema.NullOr(Schema.String)
})

/** @category Models */
export type FileChange = typeof FileChange.Type

/** A recorded tool call, as the edits are computed from it. @category Models */
export interface Call {
  readonly id: string
  readonly name: string
  readonly input: unknown
  /** The result's text, `null` when none was recorded. */
  readonly output: string | null
  readonly isError: boolean
  /** The working directory, against which a relative `file_path` is resolved. */
  readonly cwd: string
}

/** The diff of `before` → `after` for `file` (`before` `undefined`: against `/dev/null`). @category Diffs */
export const patchOf = (file: string, before: string | undefined, after: string): string =>
  createTwoFilesPatch(before === undefined ? "/dev/null" : file, file, before ?? "", after, undefined, undefined, {
    headerOptions: FILE_HEADERS_ONLY
  })

/** A fragment's diff: each side as whole lines. */
const fragmentPatch = (file: string, edits: ReadonlyArray<{ readonly old: string; readonly new: string }>): string =>
  edits.map((e, i) => {
    const line = (s: string) => (s === "" || s.endsWith("\n") ? s : `${s}\n`)
    const patch = patchOf(file, line(e.old), line(e.new))
    return i === 0 ? patch : patch.split("\n").slice(2).join("\n")
  }).join("")

const NUMBERED = /^ *(\d+)\t(.*)$/

/** A whole file's content from a `Read` result, when the result shows all of it. */
const readContent = (input: Record<string, unknown>, output: string): string | undefined => {
  if (/^\(.* exists but is empty\)$/.test(output)) return ""
  if (input["offset"] !== undefined && input["offset"] !== 1) return undefined
  if (/\n\n\(Lines \d+-\d+ of \d+\./.test(output) || output.includes("… [line truncated]")) return undefined
  const lines: Array<string> = []
  for (const line of output.split("\n")) {
    const match = NUMBERED.exec(line)
    if (match === null || Number(match[1]) !== lines.length + 1) return undefined
    lines.push(match[2]!)
  }
  return lines.length === 0 ? undefined : `${lines.join("\n")}\n`
}

/** `text` with `old` replaced (every one with `all`), or `undefined` when the edit would fail. */
const replaced = (text: string, edit: { readonly old: string; readonly new: string; readonly all: boolean }) => {
  if (edit.old === "") return undefined
  const count = text.split(edit.old).length - 1
  if (count === 0 || (count > 1 && !edit.all)) return undefined
  return edit.all ? text.split(edit.old).join(edit.new) : text.replace(edit.old, () => edit.new)
}

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** The replacements of an `Edit` or `MultiEdit` input. */
const editsOf = (name: string, input: Record<string, unknown>) => {
  const one = (e: Record<string, unknown>) => {
    const old = str(e["old_string"])
    const replacement = str(e["new_string"])
    return old === undefined || replacement === undefined
      ? []
      : [{ old, new: replacement, all: e["replace_all"] === true }]
  }
  if (name === "Edit") return one(input)
  const edits = input["edits"]
  return Array.isArray(edits) ? edits.flatMap((e) => (typeof e === "object" && e !== null ? one(e) : [])) : []
}

interface FileTrack {
  first: string | undefined
  created: boolean
  broken: boolean
  readonly calls: Array<string>
}

/**
 * The diffs of a session's calls, in order: each file-changing call's edit (by `tool_use` id) and
 * the files changed, in the order they were first changed.
 *
 * @category Constructors
 */
export const track = (calls: ReadonlyArray<Call>): {
  readonly edits: ReadonlyMap<string, FileEdit>
  readonly files: ReadonlyArray<FileChange>
} => {
  const known = new Map<string, string>()
  const tracks = new Map<string, FileTrack>()
  const edits = new Map<string, FileEdit>()

  for (const call of calls) {
    if (typeof call.input !== "object" || call.input === null) continue
    const input = call.input as Record<string, unknown>
    const path = str(input["file_path"])
    if (path === undefined) continue
    const file = nodePath.resolve(call.cwd, path)
    const applied = call.output !== null && !call.isError
    if (call.name === "Read") {
      const content = applied ? readContent(input, call.output!) : undefined
      if (content !== undefined) known.set(file, content)
      continue
    }
    const before = known.get(file)
    let after: string | undefined
    let edit: FileEdit
    if (call.name === "Write") {
      const content = str(input["content"])
      if (content === undefined) continue
      const created = applied && call.output!.startsWith("File created successfully")
      const baseline = created ? "created" : before !== undefined ? "recorded" : "unknown"
      edit = { file, baseline, applied, patch: patchOf(file, baseline === "recorded" ? before : undefined, content) }
      after = content
    } else if (call.name === "Edit" || call.name === "MultiEdit") {
      const steps = editsOf(call.name, input)
      if (steps.length === 0) continue
      const creates = steps.length === 1 && steps[0]!.old === "" && before === undefined
      after = creates
        ? steps[0]!.new
        : steps.reduce<string | undefined>((text, step) => (text === undefined ? undefined : replaced(text, step)), before)
      edit = creates
        ? { file, baseline: "created", applied, patch: patchOf(file, undefined, after!) }
        : after !== undefined
        ? { file, baseline: "recorded", applied, patch: patchOf(file, before, after) }
        : { file, baseline: "fragment", applied, patch: fragmentPatch(file, steps) }
    } else {
      continue
    }
    edits.set(call.id, edit)
    if (!applied) continue
    let t = tracks.get(file)
    if (t === undefined) {
      const created = edit.baseline === "created"
      t = { first: created ? "" : before, created, broken: false, calls: [] }
      tracks.set(file, t)
    }
    t.calls.push(call.id)
    if (edit.baseline === "fragment" || (edit.baseline === "unknown" && t.first === undefined)) t.broken = true
    if (after !== undefined) known.set(file, after)
    else known.delete(file)
  }

  const files = [...tracks].map(([file, t]): FileChange => {
    const final = known.get(file)
    const net = !t.broken && t.first !== undefined && final !== undefined
      ? patchOf(file, t.created ? undefined : t.first, final)
      : null
    return { file, calls: t.calls, created: t.created, patch: net }
  })
  return { edits, files }
}
