/**
 * `Grep` (Claude Code's inputs: `pattern`, `path`, `glob`, `type`, `output_mode`, `-i`, `-n`, `-A`,
 * `-B`, `-C`, `multiline`, `head_limit`, `offset`): searches file contents with a regular
 * expression, over the files `Glob` would see (`.gitignore` respected). The output follows
 * ripgrep's: `path:line:text` for content (with `-` separators for context lines), paths for
 * `files_with_matches` (the default, newest first), `path:count` for `count`. This is the built-in
 * search; its output is the same whether or not ripgrep is installed.
 *
 * @since 0.1.0
 */
import { Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import picomatch from "picomatch"
import * as Workspace from "./Workspace.js"

/** Default number of output lines or paths (0 means all). @category Constants */
export const DEFAULT_HEAD_LIMIT = 250

/** File types as ripgrep names them (the common ones). @category Constants */
export const TYPES: Readonly<Record<string, ReadonlyArray<string>>> = {
  js: ["*.js", "*.mjs", "*.cjs", "*.jsx"],
  ts: ["*.ts", "*.mts", "*.cts", "*.tsx"],
  py: ["*.py"],
  rust: ["*.rs"],
  go: ["*.go"],
  java: ["*.java"],
  md: ["*.md", "*.markdown"],
  json: ["*.json"],
  css: ["*.css"],
  html: ["*.html", "*.htm"],
  sh: ["*.sh", "*.bash"],
  yaml: ["*.yml", "*.yaml"]
}

const count = Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)))

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The regular expression to search for" }),
  path: Schema.optional(Schema.String).annotations({ description: "File or directory to search (default: the working directory)" }),
  glob: Schema.optional(Schema.String).annotations({ description: "Only files matching this glob, e.g. \"*.ts\"" }),
  type: Schema.optional(Schema.String).annotations({ description: "Only files of this type, e.g. \"ts\", \"py\"" }),
  output_mode: Schema.optional(Schema.Literal("content", "files_with_matches", "count")),
  "-i": Schema.optional(Schema.Boolean),
  "-n": Schema.optional(Schema.Boolean),
  "-A": count,
  "-B": count,
  "-C": count,
  multiline: Schema.optional(Schema.Boolean),
  head_limit: count,
  offset: count
})

type Input = typeof Input.Type

const isBinary = (text: string) => text.slice(0, 8192).includes("\u0000")

/** The lines of `text` a search reports for one file, ripgrep style. */
const contentLines = (file: string, lines: ReadonlyArray<string>, hits: ReadonlySet<number>, input: Input): Array<string> => {
  const before = input["-B"] ?? input["-C"] ?? 0
  const after = input["-A"] ?? input["-C"] ?? 0
  const numbers = input["-n"] ?? true
  const shown = new Set<number>()
  for (const i of hits) for (let j = Math.max(0, i - before); j <= Math.min(lines.length - 1, i + after); j++) shown.add(j)
  const out: Array<string> = []
  let previous = -2
  for (const i of [...shown].sort((a, b) => a - b)) {
    if (previous >= 0 && i > previous + 1 && (before > 0 || after > 0)) out.push("--")
    const sep = hits.has(i) ? ":" : "-"
    out.push(numbers ? `${file}${sep}${i + 1}${sep}${lines[i]}` : `${file}${sep}${lines[i]}`)
    previous = i
  }
  return out
}

/** The Grep tool. @category Constructors */
export const tool: Tool.Tool<Input> = Tool.make({
  name: "Grep",
  description: [
    "Searches file contents with a regular expression (JavaScript syntax, like ripgrep's).",
    "- output_mode: \"files_with_matches\" (default: paths, newest first), \"content\" (matching lines), \"count\".",
    "- Filter files with glob (\"*.ts\") or type (\"ts\", \"py\"); -i ignores case; -A/-B/-C add context lines.",
    `- head_limit (default ${DEFAULT_HEAD_LIMIT}, 0 for all) and offset page through the results.`
  ].join("\n"),
  input: Input,
  isReadOnly: true,
  call: (input, context) =>
    Effect.gen(function*() {
      let regex: RegExp
      try {
        regex = new RegExp(input.pattern, `g${input["-i"] === true ? "i" : ""}${input.multiline === true ? "ms" : "m"}`)
      } catch (e) {
        return yield* Tool.fail(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${(e as Error).message}`)
      }
      if (input.type !== undefined && TYPES[input.type] === undefined) {
        return yield* Tool.fail(`Unknown type ${JSON.stringify(input.type)}; known types: ${Object.keys(TYPES).join(", ")}.`)
      }
      const filters = [input.glob, ...(input.type !== undefined ? TYPES[input.type]! : [])].filter((g): g is string => g !== undefined)
      const matchers = filters.map((g) => picomatch(g, { dot: true, basename: !g.includes("/") }))
      const typeMatchers = input.type !== undefined ? matchers.slice(input.glob !== undefined ? 1 : 0) : []
      const globMatcher = input.glob !== undefined ? matchers[0] : undefined
      const root = path.resolve(context.cwd, input.path ?? ".")
      const files = yield* Workspace.find(root)
      const mode = input.output_mode ?? "files_with_matches"
      const out: Array<string> = []
      for (const { path: file } of files) {
        const rel = path.relative(root, file) || path.basename(file)
        if (globMatcher !== undefined && !globMatcher(rel)) continue
        if (typeMatchers.length > 0 && !typeMatchers.some((m) => m(rel))) continue
        const text = yield* Effect.promise(() => fs.readFile(file, "utf8").catch(() => ""))
        if (text.length === 0 || isBinary(text)) continue
        const shown = path.relative(context.cwd, file) || file
        if (mode === "content") {
          const lines = text.split(/\r?\n/)
          const hits = new Set<number>()
          regex.lastIndex = 0
          for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
            const first = text.slice(0, m.index).split("\n").length - 1
            const last = first + m[0].split("\n").length - 1
            for (let i = first; i <= last; i++) hits.add(i)
            if (m[0].length === 0) regex.lastIndex++
          }
          if (hits.size > 0) out.push(...contentLines(shown, lines, hits, input))
        } else {
          regex.lastIndex = 0
          const n = mode === "count" ? (text.match(regex) ?? []).length : regex.test(text) ? 1 : 0
          if (n > 0) out.push(mode === "count" ? `${shown}:${n}` : shown)
        }
      }
      const offset = input.offset ?? 0
      const limit = input.head_limit ?? DEFAULT_HEAD_LIMIT
      const page = out.slice(offset, limit === 0 ? undefined : offset + limit)
      if (page.length === 0) return mode === "content" ? "No matches found" : "No files found"
      const more = out.length - offset - page.length
      return more > 0 ? `${page.join("\n")}\n(${more} more results: use offset ${offset + page.length} to see them.)` : page.join("\n")
    })
})
