/**
 * Deny and ask rules against every command anywhere in a Bash call (see `BashCommand` for the
 * policy): inside substitutions, subshells, functions and pipelines, behind wrappers, and inside
 * `eval` and `sh -c` scripts. When in doubt these match: a deny rule that matches too much asks
 * or refuses a call, one that matches too little runs what the user forbade.
 *
 * @since 0.1.0
 */
import type { Node } from "web-tree-sitter"
import * as BashGrammar from "./BashGrammar.js"
import { ruleWords, type Word, wordOf } from "./BashWords.js"

/** Programs that run the command in their arguments (`sudo rm`, `xargs rm`, `find -exec rm`). */
const WRAPPERS = new Set([
  "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "env", "timeout", "sudo", "doas", "xargs", "stdbuf",
  "setsid", "chroot", "unbuffer", "watch", "strace", "find", "parallel", "flock", "caffeinate", "script", "coproc", "busybox"
])
/** Shells whose `-c` argument is a script. */
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "su"])
/** Nodes that are not a command's words. */
const NOT_WORDS = new Set(["variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect", "comment"])
const MAX_DEPTH = 8

/** `text` with quotes and backslashes removed, for the last-resort check on what cannot be parsed. */
const mentions = (text: string, first: string): boolean => text.replace(/\$'|['"\\]/g, "").includes(first)

/** Whether the words (the first is the program) may be the rule's command; a missing word is one with no static value. */
const matchesAt = (words: ReadonlyArray<Word | undefined>, content: string, depth: number): boolean => {
  const rule = ruleWords(content)
  const program = words[0]
  if (program === undefined || !program.literal) return true
  const dynamic = words.some((w) => w === undefined || !w.literal)
  const covers = rule.words.every((expected, i) => {
    if (i >= words.length) return dynamic
    const w = words[i]
    return w === undefined || !w.literal || w.value === expected
  })
  if (covers && (rule.prefix || dynamic || words.length === rule.words.length)) return true
  const script = scriptOf(words)
  if (script === undefined) return false
  return script === null || depth >= MAX_DEPTH || anyCommandMatches(script, content, depth + 1)
}

/**
 * The script an `eval` or `sh -c` runs: `null` when it has no static value (or is read from
 * standard input: `... | sh`, `sh <<EOF`), `undefined` when there is none (a shell given a script
 * file runs the user's file, not judged here).
 */
const scriptOf = (words: ReadonlyArray<Word | undefined>): string | null | undefined => {
  const program = words[0]!.value
  if (program === "eval") return words.slice(1).some((w) => w === undefined) ? null : words.slice(1).map((w) => w!.value).join(" ")
  if (!SHELLS.has(program.split("/").pop()!)) return undefined
  const flag = words.findIndex((w, i) => i > 0 && (w === undefined || /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.value)))
  if (flag === -1) return words.slice(1).every((w) => w !== undefined && w.value.startsWith("-")) ? null : undefined
  const script = words[flag + 1]
  return words[flag] === undefined || script === undefined ? null : script.value
}

const commandMatches = (node: Node, content: string, depth: number): boolean => {
  const words: Array<Word | undefined> = []
  for (const child of node.children) {
    if (child === null || !child.isNamed || NOT_WORDS.has(child.type)) continue
    if (child.type === "command_name") {
      const inner = child.namedChildren[0]
      words.push(inner === null || inner === undefined ? undefined : wordOf(inner))
    } else if (words.length > 0) words.push(wordOf(child))
  }
  if (words.length === 0) return false
  const program = words[0]
  const wrapped = program !== undefined && WRAPPERS.has(program.value.split("/").pop()!)
  for (let start = 0; start < (wrapped ? words.length : 1); start++) {
    if (matchesAt(words.slice(start), content, depth)) return true
  }
  return false
}

/**
 * Whether a deny or ask rule's content (`rm:*`, `git push`) matches any command anywhere in
 * `command` (see the module doc). Call after `BashGrammar.ready`: before it, and when the grammar
 * failed to load, the last-resort check decides.
 *
 * @category Matching
 */
export const anyCommandMatches = (command: string, content: string, depth = 0): boolean => {
  const first = ruleWords(content).words[0]
  if (first === undefined) return false
  const verdict = BashGrammar.withTree(command, (root) => {
    if (root.hasError && mentions(command, first)) return true
    return root.descendantsOfType("command").some((c) => c !== null && commandMatches(c, content, depth))
  })
  return verdict ?? mentions(command, first)
}
