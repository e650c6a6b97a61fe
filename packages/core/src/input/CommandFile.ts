/**
 * A custom command's file, read: its YAML frontmatter (`description`, `argument-hint`, `model`) and
 * its body, the prompt. Frontmatter that is not a YAML mapping, or too long or too deeply nested for
 * the parser to read safely, is an `InvalidFile` saying what is wrong and how to fix it. The YAML
 * library is loaded (dynamic `import()`) only for a file that has frontmatter.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { MODEL_ALIASES } from "./BuiltinCommands.js"

/** Frontmatter longer than this (in characters) is reported as broken, not parsed. @category Constants */
export const MAX_FRONTMATTER_CHARS = 8 * 1024

/**
 * Frontmatter nested deeper than this is reported as broken before the YAML library composes it:
 * deep nesting exhausts the stack, and in Node a second overflow in the parser can abort the process.
 *
 * @category Constants
 */
export const MAX_NESTING = 32

/** The frontmatter keys a command file may set. @category Models */
export interface Frontmatter {
  readonly description?: string | undefined
  readonly argumentHint?: string | undefined
  /** As written: an alias, `default` or a model id. */
  readonly model?: string | undefined
}

/** A command file: its frontmatter and the body after it, the prompt. @category Models */
export interface ParsedFile {
  readonly frontmatter: Frontmatter
  readonly body: string
}

/** Why a command file cannot be used, and what to do about it. @category Errors */
export class InvalidFile extends Data.TaggedError("InvalidFile")<{
  /** What is wrong, said of the file (`has frontmatter that is not valid YAML: ...`). */
  readonly problem: string
  /** How to fix it. */
  readonly fix: string
}> {}

const OPENING = /^---[ \t]*(?:\r?\n|$)/
const CLOSING = /^---[ \t]*(?:\r?\n|$)/m

const yamlFix = "Correct the YAML between the --- lines: quote a value that holds \": \" or \" #\" or starts with " +
  "one of [ { * & ! | > ' \" % @ ` (description: \"Review: the diff\"), or remove the frontmatter."

/** `argument-hint: [file] [mode]` is how hints are written, though not YAML: read such a value as text. */
const quoteHints = (yaml: string): string =>
  yaml.replace(/^(argument-hint:[ \t]*)([[{][^\n]*)$/gm, (_, key: string, value: string) =>
    `${key}'${value.trimEnd().replaceAll("'", "''")}'`)

type Yaml = typeof import("yaml")

/**
 * The YAML library, loaded now. It is a CommonJS module: bundled for Node (the `keel` binary) its
 * namespace holds it as `default` only, elsewhere its named exports too.
 */
const loadYaml = (): Promise<Yaml> =>
  import("yaml").then((module) => ("Parser" in module ? module : (module as unknown as { default: Yaml }).default))

/** How deeply the YAML nests, from its syntax tree, walked without recursion (the parser makes none). */
const nesting = (YAML: Yaml, source: string): number => {
  let deepest = 0
  const stack: Array<readonly [unknown, number]> = []
  for (const token of new YAML.Parser().parse(source)) stack.push([token, 0])
  while (stack.length > 0) {
    const [token, depth] = stack.pop()!
    deepest = Math.max(deepest, depth)
    const node = token as { readonly value?: unknown; readonly items?: ReadonlyArray<Record<string, unknown>> }
    if (typeof node.value === "object" && node.value !== null) stack.push([node.value, depth + 1])
    for (const item of node.items ?? []) {
      if (typeof item.key === "object" && item.key !== null) stack.push([item.key, depth + 1])
      if (typeof item.value === "object" && item.value !== null) stack.push([item.value, depth + 1])
    }
  }
  return deepest
}

const textValue = (data: Record<string, unknown>, key: string): Effect.Effect<string | undefined, InvalidFile> => {
  const value = Object.hasOwn(data, key) ? data[key] : undefined
  if (value === undefined || value === null) return Effect.succeed(undefined)
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    const text = String(value).trim()
    return Effect.succeed(text === "" ? undefined : text)
  }
  return new InvalidFile({
    problem: `has a "${key}" in its frontmatter that is not text but a ${Array.isArray(value) ? "list" : "mapping"}`,
    fix: `Write it as one line of text (${key}: ...), in quotes if it starts with [ or {.`
  })
}

/** Frontmatter's YAML as a mapping (empty for blank YAML), or why it is not one. */
const readMapping = (yaml: string): Effect.Effect<Record<string, unknown>, InvalidFile> =>
  Effect.gen(function*() {
    if (yaml.trim() === "") return {}
    const flat = "Keep the frontmatter to a few key: value lines, and put long text in the body."
    if (yaml.length > MAX_FRONTMATTER_CHARS) {
      const problem = `has frontmatter longer than ${MAX_FRONTMATTER_CHARS} characters`
      return yield* new InvalidFile({ problem, fix: flat })
    }
    const YAML = yield* Effect.tryPromise({
      try: loadYaml,
      catch: (e) =>
        new InvalidFile({ problem: `could not be read: the YAML parser did not load (${e})`, fix: "Reinstall Keel." })
    })
    const source = quoteHints(yaml.replaceAll("\r\n", "\n"))
    if (nesting(YAML, source) > MAX_NESTING) {
      const problem = `has frontmatter nested more than ${MAX_NESTING} levels deep`
      return yield* new InvalidFile({ problem, fix: flat })
    }
    const doc = YAML.parseDocument(source, { uniqueKeys: true, merge: false })
    const error = doc.errors[0]
    if (error !== undefined) {
      // Lines count from the file's first line, the opening `---`.
      const position = error.linePos?.[0]
      const at = position === undefined ? "" : ` (line ${position.line + 1}, column ${position.col})`
      const what = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")
      return yield* new InvalidFile({ problem: `has frontmatter that is not valid YAML: ${what}${at}`, fix: yamlFix })
    }
    const data: unknown = yield* Effect.try({
      try: () => doc.toJS({ maxAliasCount: 100 }),
      catch: (e) =>
        new InvalidFile({ problem: `has frontmatter that is not valid YAML: ${(e as Error).message}`, fix: yamlFix })
    })
    if (data === null || data === undefined) return {}
    if (typeof data !== "object" || Array.isArray(data)) {
      return yield* new InvalidFile({
        problem: `has frontmatter that is not a mapping of "key: value" lines but a ${
          Array.isArray(data) ? "list" : "single value"
        }`,
        fix: "Write the frontmatter as key: value lines (description: ..., argument-hint: ..., model: ...)."
      })
    }
    return data as Record<string, unknown>
  })

const parseFrontmatter = (yaml: string): Effect.Effect<Frontmatter, InvalidFile> =>
  Effect.gen(function*() {
    if (yaml.trim() === "") return {}
    const record = yield* readMapping(yaml)
    const model = yield* textValue(record, "model")
    if (model !== undefined && /\s/.test(model)) {
      return yield* new InvalidFile({
        problem: `has a model with spaces in it ("${model}")`,
        fix: `Give one model name: ${Object.keys(MODEL_ALIASES).join(", ")}, default, or a model id.`
      })
    }
    return {
      description: yield* textValue(record, "description"),
      argumentHint: yield* textValue(record, "argument-hint"),
      model
    }
  })

/**
 * A command file's frontmatter and body. Without a `---` first line the whole text is the body;
 * an opening `---` line with no closing one, or frontmatter that is not a YAML mapping, is an
 * error. The YAML library is loaded only for a file that has frontmatter.
 *
 * @category Parsing
 */
export const parseFile = (text: string): Effect.Effect<ParsedFile, InvalidFile> =>
  Effect.flatMap(split(text), ({ body, yaml }) =>
    Effect.map(yaml === undefined ? Effect.succeed({}) : parseFrontmatter(yaml), (frontmatter) => ({ frontmatter, body })))

/** A Markdown file's frontmatter YAML (`undefined` without a `---` first line) and its body. */
const split = (text: string): Effect.Effect<{ readonly yaml: string | undefined; readonly body: string }, InvalidFile> =>
  Effect.gen(function*() {
    const content = text.startsWith("\uFEFF") ? text.slice(1) : text
    const opening = OPENING.exec(content)
    if (opening === null) return { yaml: undefined, body: content }
    const rest = content.slice(opening[0].length)
    const closing = CLOSING.exec(rest)
    if (closing === null) {
      return yield* new InvalidFile({
        problem: "starts with a --- line (frontmatter) that no closing --- line follows",
        fix: "End the frontmatter with a line holding only ---, or remove the first line if the file has no " +
          "frontmatter."
      })
    }
    return { yaml: rest.slice(0, closing.index), body: rest.slice(closing.index + closing[0].length) }
  })

/**
 * A Markdown file's frontmatter as the YAML mapping it is, every key kept (for files with keys of
 * their own, such as agent files), and its body; the same checks and errors as {@link parseFile}.
 *
 * @category Parsing
 */
export const parseMapping = (
  text: string
): Effect.Effect<{ readonly data: Record<string, unknown>; readonly body: string }, InvalidFile> =>
  Effect.flatMap(split(text), ({ body, yaml }) =>
    Effect.map(yaml === undefined ? Effect.succeed({}) : readMapping(yaml), (data) => ({ data, body })))

/**
 * A command's description from its body: the first non-empty line, without a leading `# `, cut to
 * 97 characters and `...` when longer than 100; `Custom command` for an empty body.
 *
 * @category Parsing
 */
export const describeBody = (body: string): string => {
  for (const line of body.split("\n")) {
    const trimmed = line.trim()
    if (trimmed === "") continue
    const text = trimmed.startsWith("# ") ? trimmed.slice(2).trim() : trimmed
    const chars = Array.from(text)
    return chars.length > 100 ? `${chars.slice(0, 97).join("")}...` : text
  }
  return "Custom command"
}

