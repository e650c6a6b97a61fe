/**
 * What a `Grep` call asks for, checked once and shared by its two searches (ripgrep and the
 * built-in one): the input as the model sends it (Claude Code's fields), the regular expression
 * (JavaScript syntax), the file filters (`glob`, `type`), the output mode and the context lines.
 *
 * @since 0.1.0
 */
import { Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import picomatch from "picomatch"

/** File types as ripgrep names them (the common ones), as globs on the file name. @category Constants */
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

/** Default number of output lines or paths (0 means all). @category Constants */
export const DEFAULT_HEAD_LIMIT = 250

const count = (description: string) =>
  Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)).annotations({ description }))

const flag = (description: string) => Schema.optional(Schema.Boolean.annotations({ description }))

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The regular expression to search for" }),
  path: Schema.optional(Schema.String).annotations({ description: "File or directory to search (default: the working directory)" }),
  glob: Schema.optional(Schema.String).annotations({ description: "Only files matching this glob, e.g. \"*.ts\"" }),
  type: Schema.optional(Schema.String).annotations({ description: "Only files of this type, e.g. \"ts\", \"py\"" }),
  output_mode: Schema.optional(Schema.Literal("content", "files_with_matches", "count").annotations({
    description: "content: the matching lines; files_with_matches: their files (the default); count: matches per file"
  })),
  "-i": flag("Ignore case"),
  "-n": flag("Show line numbers in content mode (default true)"),
  "-A": count("Lines to show after each match (content mode)"),
  "-B": count("Lines to show before each match (content mode)"),
  "-C": count("Lines to show before and after each match (content mode)"),
  multiline: flag("Let matches span lines, and . match line breaks (default false)"),
  head_limit: count(`Show at most this many lines or paths (default ${DEFAULT_HEAD_LIMIT}; 0 for all)`),
  offset: count("Skip this many lines or paths first, to page through results")
})

/** @category Schemas */
export type Input = typeof Input.Type

/** What a search reports. @category Models */
export type OutputMode = "content" | "files_with_matches" | "count"

/** A checked `Grep` call. @category Models */
export interface Query {
  readonly input: Input
  /** The regular expression, as given. */
  readonly pattern: string
  readonly ignoreCase: boolean
  /** Whether matches may span lines (and `.` matches a newline). */
  readonly multiline: boolean
  readonly mode: OutputMode
  /** Context lines before and after each matching line (content mode). */
  readonly before: number
  readonly after: number
  readonly lineNumbers: boolean
  /** The file or folder searched, absolute. */
  readonly root: string
  /** The working directory: output paths are relative to it. */
  readonly cwd: string
  /** The `glob` filter, if one was given (an empty one counts as none). */
  readonly glob: string | undefined
  /** The `type`'s globs on the file name (empty without a type). */
  readonly typeGlobs: ReadonlyArray<string>
  /** Whether a file, by its path relative to `root` (its name when `root` is the file), passes `glob` and `type`. */
  readonly accepts: (relative: string) => boolean
  /**
   * Whether a file found (absolute) may be shown: not covered by a `Read` deny rule, not outside
   * the workspace (see `ReadRules`). Files it refuses are skipped unread; absent: every file.
   */
  readonly shows?: ((file: string) => boolean) | undefined
  /** `--glob` exclusions ripgrep applies first (the deny rules under `root`), sparing it denied files. */
  readonly excludeGlobs?: ReadonlyArray<string> | undefined
  /**
   * A fresh regular expression: global, `s` (`.` matches any character but the line break the
   * search splits on), `i` when asked, and `m` in multiline mode, where it runs on a whole file.
   */
  readonly regex: () => RegExp
}

/** Whether text looks binary: a NUL character in its first 8,192 characters. @category Utils */
export const isBinary = (text: string): boolean => text.slice(0, 8192).includes("\u0000")

/**
 * Checks an input against the working directory: the pattern must compile, the glob parse and the
 * type be known; failures are messages the model can act on.
 *
 * @category Constructors
 */
export const make = (input: Input, cwd: string): Effect.Effect<Query, Tool.ToolError> =>
  Effect.gen(function*() {
    const ignoreCase = input["-i"] === true
    const multiline = input.multiline === true
    const flags = `gs${ignoreCase ? "i" : ""}${multiline ? "m" : ""}`
    try {
      new RegExp(input.pattern, flags)
    } catch (e) {
      return yield* Tool.fail(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${(e as Error).message}`)
    }
    if (input.type !== undefined && !Object.hasOwn(TYPES, input.type)) {
      return yield* Tool.fail(`Unknown type ${JSON.stringify(input.type)}; known types: ${Object.keys(TYPES).join(", ")}.`)
    }
    const glob = input.glob === "" ? undefined : input.glob
    const typeGlobs = input.type !== undefined ? TYPES[input.type]! : []
    const matcher = (g: string) => picomatch(g, { dot: true, basename: !g.includes("/") })
    let globMatches: (relative: string) => boolean = () => true
    try {
      if (glob !== undefined) globMatches = matcher(glob)
    } catch (e) {
      return yield* Tool.fail(`Invalid glob ${JSON.stringify(glob)}: ${(e as Error).message}`)
    }
    const typeMatchers = typeGlobs.map(matcher)
    return {
      input,
      pattern: input.pattern,
      ignoreCase,
      multiline,
      mode: input.output_mode ?? "files_with_matches",
      before: input["-B"] ?? input["-C"] ?? 0,
      after: input["-A"] ?? input["-C"] ?? 0,
      lineNumbers: input["-n"] ?? true,
      root: path.resolve(cwd, input.path ?? "."),
      cwd,
      glob,
      typeGlobs,
      accepts: (relative) => globMatches(relative) && (typeMatchers.length === 0 || typeMatchers.some((m) => m(relative))),
      regex: () => new RegExp(input.pattern, flags)
    }
  })
