/**
 * `@path` imports in memory files, as Claude Code reads them. A line's `@docs/extra.md` (at the
 * start of a line or after whitespace; the path runs to the next whitespace, `\ ` keeps a space,
 * a `#fragment` is dropped) brings that file's content in as a memory file of its own, listed right
 * after the file that imports it (depth first). Paths are relative to the importing file, `~/` is
 * the user's home folder, an absolute path stays as it is.
 *
 * Not imports: text inside inline code spans or code blocks (fenced or indented), found with
 * `marked`'s lexer (the Markdown parser Claude Code uses for the same purpose, already Keel's
 * REPL renderer); an `@` inside a word (`me@example.com`); a path that does not look like one
 * (`@@x`, `@#x`).
 *
 * @since 0.1.0
 */
import { Lexer, type Token } from "marked"

/** The memory file and up to four levels of imports below it: a chain is at most this many files. @category Constants */
export const MAX_DEPTH = 5

const IMPORT = /(?:^|\s)@((?:[^\s\\]|\\ )+)/g

/** Whether `spec` names a path (`./x`, `~/x`, `/x`, or a plain name), not a mention of something else. */
const looksLikePath = (spec: string): boolean =>
  spec.startsWith("./") || spec.startsWith("../") || spec.startsWith("~/") ||
  (spec.startsWith("/") && spec !== "/") ||
  /^[A-Za-z0-9._-]/.test(spec)

/** The import paths of a text that is not code: each as written, unescaped, without its `#fragment`. */
const importsInText = (text: string, into: Array<string>): void => {
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1]!.replace(/\\ /g, " ").split("#")[0]!
    if (spec.length > 0 && looksLikePath(spec) && !into.includes(spec)) into.push(spec)
  }
}

const walk = (tokens: ReadonlyArray<Token>, into: Array<string>): void => {
  for (const token of tokens) {
    if (token.type === "code" || token.type === "codespan" || token.type === "html") continue
    const children = "tokens" in token && Array.isArray(token.tokens) ? token.tokens : undefined
    const items = token.type === "list" ? (token.items as ReadonlyArray<Token>) : undefined
    if (children !== undefined && children.length > 0) walk(children, into)
    else if (token.type === "text") importsInText(token.text, into)
    if (items !== undefined) walk(items, into)
  }
}

/**
 * The import paths of a memory file's `content`, in the order they appear, each once, as written
 * (not resolved; see {@link resolve}).
 *
 * @category Parsing
 */
export const importsOf = (content: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (!content.includes("@")) return out
  walk(new Lexer({ gfm: true }).lex(content), out)
  return out
}

/**
 * The absolute path an import `spec` names, from the folder of the file importing it (`fromDir`):
 * `~/x` in the user's home folder (`undefined` without one), `/x` as it is, anything else relative.
 *
 * @category Parsing
 */
export const resolve = (
  spec: string,
  fromDir: string,
  userHome: string | undefined,
  path: { readonly resolve: (...segments: Array<string>) => string }
): string | undefined => {
  if (spec.startsWith("~/")) return userHome === undefined ? undefined : path.resolve(userHome, spec.slice(2))
  return path.resolve(fromDir, spec)
}
