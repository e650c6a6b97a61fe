/**
 * Bash commands judged on a real shell syntax tree (tree-sitter-bash, see `BashGrammar`), for
 * permission rules.
 *
 * Allow rules ({@link analyse}) see a command only when every construct in it is one modelled
 * here: simple commands whose words have a static value (`BashWords`), joined by `;`, `&&`, `||`,
 * `|`, `|&`, `&` and newlines, with comments (ignored, as the shell ignores them), a few harmless
 * environment prefixes ({@link SAFE_ENV}) and the redirections that write nothing
 * (`>/dev/null`, `2>/dev/null`, `&>/dev/null`, `2>&1`, `>&2`). Anything else (substitutions,
 * subshells, functions, loops, heredocs, other redirections, a syntax error, or a grammar that did
 * not load) is "cannot analyse", which no allow rule matches.
 *
 * Deny and ask rules ({@link anyCommandMatches}) look at every command anywhere in the tree,
 * including inside substitutions, subshells and functions, behind wrappers (`sudo`, `env`,
 * `xargs`, `find -exec`, ...) and inside `eval` and `sh -c` scripts. They fail the other way: a
 * command whose name has no static value (`$cmd`, `$(...)`) matches every deny and ask rule, a word
 * the rule's prefix covers that has no static value matches any word, and a command the parser
 * could not fully read matches a rule whose first word appears anywhere in it once quotes and
 * backslashes are removed.
 *
 * @since 0.1.0
 */
import type { Node } from "web-tree-sitter"
import * as BashGrammar from "./BashGrammar.js"
import { ruleWords, type Word, wordOf } from "./BashWords.js"

export type { Word } from "./BashWords.js"
export { anyCommandMatches } from "./BashCommandAnywhere.js"

/** What an allow rule sees of a command: its simple commands' words, or why it cannot. @category Models */
export type Analysis =
  | { readonly _tag: "Analysed"; readonly commands: ReadonlyArray<ReadonlyArray<Word>> }
  | { readonly _tag: "Unanalysable"; readonly reason: string }

/**
 * Environment prefixes an allowed command may carry (`NODE_ENV=test npm test`): they change no
 * program that runs and load no code. Any other (`PATH=`, `LD_PRELOAD=`, `BASH_ENV=`, `GIT_*`)
 * makes the command unanalysable.
 *
 * @category Constants
 */
export const SAFE_ENV: ReadonlySet<string> = new Set([
  "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC", "LC_TIME", "TZ", "NODE_ENV",
  "RUST_BACKTRACE", "RUST_LOG", "NO_COLOR", "FORCE_COLOR", "CI", "COLUMNS", "PYTHONUNBUFFERED",
  "PYTHONDONTWRITEBYTECODE", "GOOS", "GOARCH", "CGO_ENABLED"
])

/** Tokens that join statements. */
const JOINERS = new Set([";", "&", "&&", "||", "|", "|&", "\n"])

// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/

const named = (node: Node): ReadonlyArray<Node> => node.children.filter((c): c is Node => c !== null && c.isNamed)

/** Whether a redirection writes nothing: to `/dev/null` exactly, or a dup onto a single-digit fd. */
const harmless = (redirect: Node): boolean => {
  if (redirect.type !== "file_redirect") return false
  const parts = redirect.children.filter((c): c is Node => c !== null)
  let at = 0
  if (parts[at]?.type === "file_descriptor") {
    if (!/^\d$/.test(parts[at]!.text)) return false
    at++
  }
  const op = parts[at]?.type
  const rest = parts.slice(at + 1)
  if (rest.length !== 1) return false
  const target = wordOf(rest[0]!)
  if (target === undefined || !target.literal) return false
  if (op === ">" || op === ">>" || op === "&>" || op === "&>>") return target.value === "/dev/null"
  if (op === ">&") return /^\d$/.test(target.value)
  return false
}

/** A simple command's words for an allow rule, or why it cannot be judged. */
const simpleCommand = (node: Node): Array<Word> | string => {
  const words: Array<Word> = []
  let named_ = false
  for (const child of node.children) {
    if (child === null) return "an unreadable command"
    switch (child.type) {
      case "variable_assignment": {
        if (named_) return "an unreadable command"
        const [name, value, ...more] = named(child)
        const op = child.children.find((c) => c !== null && !c.isNamed)?.type
        if (name?.type !== "variable_name" || op !== "=" || more.length > 0 || !SAFE_ENV.has(name.text)) {
          return `the environment prefix ${child.text.split("=")[0]}`
        }
        if (value !== undefined && wordOf(value)?.literal !== true) return "an expansion"
        break
      }
      case "file_redirect":
      case "heredoc_redirect":
      case "herestring_redirect":
        if (!harmless(child)) return "a redirection"
        break
      case "command_name": {
        const [inner, ...more] = named(child)
        const word = inner === undefined ? undefined : wordOf(inner)
        if (word === undefined || !word.literal || more.length > 0) return "a command name that is not a plain word"
        words.push(word)
        named_ = true
        break
      }
      case "comment":
        break
      default: {
        const word = child.isNamed ? wordOf(child) : undefined
        if (word === undefined || !named_) return child.isNamed ? describe(child) : "an unreadable command"
        words.push(word)
      }
    }
  }
  return named_ ? words : "a command without a name"
}

const describe = (node: Node): string => {
  switch (node.type) {
    case "command_substitution":
      return "command substitution"
    case "process_substitution":
      return "process substitution"
    case "simple_expansion":
    case "expansion":
    case "arithmetic_expansion":
      return "an expansion"
    case "subshell":
      return "a subshell"
    case "function_definition":
      return "a function definition"
    case "word":
    case "number":
    case "string":
    case "raw_string":
    case "ansi_c_string":
    case "concatenation": {
      // A word with no static value: name what is inside it (`"$(x)"` holds a command substitution).
      const inner = node.namedChildren.map((c) => (c === null ? "an unreadable word" : describe(c)))
      return inner.find((why) => why !== "an unreadable word") ?? "an unreadable word"
    }
    default:
      return node.type.replace(/_/g, " ")
  }
}

/** Collects the simple commands of a statement into `out`; the reason it cannot, if so. */
const statement = (node: Node, out: Array<Array<Word>>): string | undefined => {
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline":
      for (const child of node.children) {
        if (child === null) return "an unreadable command"
        if (!child.isNamed) {
          if (!JOINERS.has(child.type)) return `the operator ${child.type}`
          continue
        }
        if (child.type === "comment") continue
        const why = statement(child, out)
        if (why !== undefined) return why
      }
      return undefined
    case "redirected_statement": {
      const [body, ...redirects] = named(node)
      if (body === undefined || redirects.some((r) => !harmless(r))) return "a redirection"
      return statement(body, out)
    }
    case "command": {
      const words = simpleCommand(node)
      if (typeof words === "string") return words
      out.push(words)
      return undefined
    }
    default:
      return describe(node)
  }
}

/**
 * What an allow rule sees of `command` (see the module doc). Call after `BashGrammar.ready`:
 * before it, and when the grammar failed to load, every command is unanalysable.
 *
 * @category Analysing
 */
export const analyse = (command: string): Analysis => {
  if (CONTROL.test(command)) return { _tag: "Unanalysable", reason: "a control character" }
  const verdict = BashGrammar.withTree(command, (root): Analysis => {
    if (root.hasError) return { _tag: "Unanalysable", reason: "a syntax error" }
    const commands: Array<Array<Word>> = []
    const why = statement(root, commands)
    return why !== undefined ? { _tag: "Unanalysable", reason: why } : { _tag: "Analysed", commands }
  })
  return verdict ?? { _tag: "Unanalysable", reason: "the bash grammar is not loaded" }
}

/**
 * Whether a simple command's words match a rule's content: `prefix:*` matches when the command's
 * first words are the prefix's words (each a literal, not a pattern), exact content when all its
 * words are. Compared after quote removal: `"git" st'at'us` is `git status`.
 *
 * @category Matching
 */
export const matchesContent = (words: ReadonlyArray<Word>, content: string): boolean => {
  const rule = ruleWords(content)
  if (rule.words.length === 0) return false
  if (rule.prefix ? words.length < rule.words.length : words.length !== rule.words.length) return false
  if (!rule.prefix && words.some((w) => !w.literal)) return false
  return rule.words.every((w, i) => words[i]!.literal && words[i]!.value === w)
}
