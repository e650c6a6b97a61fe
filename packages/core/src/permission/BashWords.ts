/**
 * The value of a shell word after quote removal, computed from its syntax node: `ec"h"o`,
 * `$'\x65cho'` and `e\cho` are all `echo`. A word holding any expansion (`$x`, `${x}`, `$(...)`,
 * backticks, `$((...))`) has no static value; a word the shell would still glob, brace-expand or
 * tilde-expand (`*.ts`, `{a,b}`, `~/x`) is a pattern: its value is only what was written. So is
 * a plain parameter expansion (`$x`, `${x}`, `"$x"`, `$1`, `"$@"`, with no operator inside the braces):
 * it runs nothing, so like a glob it may stand among a command's arguments after a rule's prefix,
 * never in the prefix or as the command's name. Any other expansion has no value.
 *
 * @since 0.1.0
 */
import type { Node } from "web-tree-sitter"

/** A word's value; `literal` is false for a pattern (see the module doc). @category Models */
export interface Word {
  readonly value: string
  readonly literal: boolean
}

/** Characters that make an unquoted word a pattern (globs, braces, and `~` first). */
const PATTERN = new Set(["*", "?", "[", "]", "{", "}"])
/** Characters that never belong in an unquoted word the parser closed: fail closed if one does. */
const FOREIGN = new Set(["$", "`", "(", ")", "<", ">", "|", "&", ";", "'", "\"", " ", "\t", "\n", "\r"])
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/

/** A parameter's name: a variable's, a positional one's, or a special one's (`$@`, `$?`, ...). */
const PARAMETER_NAME = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])$/

/**
 * A plain parameter expansion node: `$` or `${` then a parameter's name (then `}`), nothing else
 * (no operator, index or indirection). Judged by the node's children, since the grammar may fold
 * the whitespace before `$` into its token.
 */
const plainParameter = (node: Node): boolean => {
  const parts = node.children.filter((c): c is Node => c !== null)
  const named = (c: Node | undefined) =>
    c !== undefined && (c.type === "variable_name" || c.type === "special_variable_name") && c.childCount === 0 &&
    PARAMETER_NAME.test(c.text)
  if (node.type === "simple_expansion") return parts.length === 2 && parts[0]!.text.trim() === "$" && named(parts[1])
  if (node.type === "expansion") {
    return parts.length === 3 && parts[0]!.text.trim() === "${" && named(parts[1]) && parts[2]!.type === "}"
  }
  return false
}

/** An unquoted word's text: backslash escapes removed, `\`+newline joined. */
const unquoted = (text: string): Word | undefined => {
  if (CONTROL.test(text)) return undefined
  let value = ""
  let literal = !text.startsWith("~")
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (ch === "\\") {
      const next = text[i + 1]
      if (next === undefined) value += ch
      else if (next !== "\n") value += next
      i++
      continue
    }
    if (FOREIGN.has(ch)) return undefined
    if (PATTERN.has(ch)) literal = false
    value += ch
  }
  return { value, literal }
}

/** The inside of `"..."`: only `\$`, `` \` ``, `\"`, `\\` and `\`+newline are escapes; any unescaped `$` or backtick expands. */
const doubleQuoted = (inner: string): string | undefined => {
  if (CONTROL.test(inner)) return undefined
  let value = ""
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!
    if (ch === "\\") {
      const next = inner[i + 1]
      if (next === "\n") i++
      else if (next === "$" || next === "`" || next === "\"" || next === "\\") {
        value += next
        i++
      } else value += ch
      continue
    }
    if (ch === "$" || ch === "`") return undefined
    value += ch
  }
  return value
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v",
  "\\": "\\", "'": "'", "\"": "\"", "?": "?"
}

/**
 * The inside of `$'...'` as bash decodes it. A NUL ends the value, as in bash; `\c` and anything
 * beyond ASCII (whose bytes depend on the locale) have no static value here.
 */
export const ansiC = (inner: string): string | undefined => {
  let value = ""
  const code = (digits: string, radix: number): string | undefined => {
    const n = parseInt(digits, radix)
    return n > 0x7f ? undefined : String.fromCharCode(n)
  }
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!
    if (ch !== "\\") {
      value += ch
      continue
    }
    const next = inner[i + 1]
    if (next === undefined) {
      value += ch
      continue
    }
    let decoded: string | undefined
    let used = 1
    const simple = SIMPLE_ESCAPES[next]
    if (simple !== undefined) decoded = simple
    else if (/[0-7]/.test(next)) {
      const digits = /^[0-7]{1,3}/.exec(inner.slice(i + 1))![0]
      decoded = code(digits, 8)
      used = digits.length
    } else if (next === "x" || next === "u" || next === "U") {
      const max = next === "x" ? 2 : next === "u" ? 4 : 8
      const digits = new RegExp(`^[0-9a-fA-F]{1,${max}}`).exec(inner.slice(i + 2))?.[0]
      if (digits === undefined) decoded = "\\" + next
      else {
        decoded = code(digits, 16)
        used = 1 + digits.length
      }
    } else if (next === "c") return undefined
    else decoded = "\\" + next
    if (decoded === undefined) return undefined
    if (decoded === "\0") return value
    value += decoded
    i += used
  }
  return value
}

/**
 * The value of a word node (`word`, `number`, `raw_string`, `ansi_c_string`, `string`,
 * `concatenation` of those), or `undefined` when it has no static value.
 *
 * @category Reading
 */
export const wordOf = (node: Node): Word | undefined => {
  const text = node.text
  switch (node.type) {
    case "word":
    case "number":
      return node.childCount === 0 ? unquoted(text) : undefined
    case "raw_string":
      return text.length >= 2 && text.startsWith("'") && text.endsWith("'")
        ? { value: text.slice(1, -1), literal: true }
        : undefined
    case "ansi_c_string": {
      if (text.length < 3 || !text.startsWith("$'") || !text.endsWith("'")) return undefined
      const value = ansiC(text.slice(2, -1))
      return value === undefined ? undefined : { value, literal: true }
    }
    case "simple_expansion":
    case "expansion":
      return plainParameter(node) ? { value: text, literal: false } : undefined
    case "string": {
      if (text.length < 2 || !text.startsWith("\"") || !text.endsWith("\"")) return undefined
      const parts = node.children.filter((c): c is Node => c !== null && c.type !== "\"")
      // "...$x..." holding only plain parameters: a pattern whose value is the text as written.
      if (parts.some(plainParameter) && parts.every((c) => c.type === "string_content" || plainParameter(c))) {
        return CONTROL.test(text) ? undefined : { value: text, literal: false }
      }
      const plain = parts.every((c) => c.type === "string_content")
      if (!plain) return undefined
      const value = doubleQuoted(text.slice(1, -1))
      return value === undefined ? undefined : { value, literal: true }
    }
    case "concatenation": {
      let value = ""
      let literal = true
      // The parts must tile the node's text: a gap would be text the parts do not account for.
      let at = node.startIndex
      for (const part of node.children) {
        if (part === null || part.startIndex !== at) return undefined
        const word = wordOf(part)
        if (word === undefined) return undefined
        value += word.value
        literal &&= word.literal
        at = part.endIndex
      }
      return at === node.endIndex ? { value, literal } : undefined
    }
    default:
      return undefined
  }
}

/** A rule's content as words, and whether it is a prefix (`npm test:*`) or exact. @category Matching */
export const ruleWords = (content: string): { readonly words: ReadonlyArray<string>; readonly prefix: boolean } => {
  const prefix = content.endsWith(":*")
  const text = (prefix ? content.slice(0, -2) : content).trim()
  return { words: text === "" ? [] : text.split(/\s+/), prefix }
}
