/**
 * Which Bash commands only read: every simple command of the chain is a known reader (`ls`, `cat`,
 * `grep`, `git status`, ...) with no option that writes or runs something else, and the command has
 * no substitution or redirection to a file (`BashCommand.parse`). Such a call may run beside other
 * concurrency-safe calls, as Claude Code runs read-only Bash commands in parallel. Permissions do
 * not use this: Bash still asks.
 *
 * @since 0.1.0
 */
import { BashCommand } from "@keel/core"

/** Programs that only read, whatever their arguments. @category Constants */
export const READERS: ReadonlySet<string> = new Set([
  "cat", "head", "tail", "wc", "ls", "pwd", "echo", "grep", "egrep", "fgrep", "rg", "which", "file", "stat", "du",
  "df", "date", "basename", "dirname", "realpath", "readlink", "tree", "whoami", "uname", "hostname", "id", "uniq",
  "cut", "tr", "diff", "cmp", "comm", "nl", "od", "hexdump", "md5sum", "sha1sum", "sha256sum", "true", "false",
  "test", "jq", "less", "more", "printenv", "sleep"
])

/** Read-only `git` subcommands. @category Constants */
export const GIT_READERS: ReadonlySet<string> = new Set([
  "status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "describe", "shortlog", "grep", "show-ref"
])

/** `find` options that delete, write or run other programs. */
const FIND_WRITERS = new Set(["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"])

/** Splits a simple command into words, dropping quotes (enough to judge the program and its options). */
const words = (simple: string): Array<string> =>
  (simple.match(/"(?:[^"\\]|\\.)*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^["']|["']$/g, ""))

const readsOnly = (simple: string): boolean => {
  const [program, ...args] = words(simple)
  if (program === undefined) return true
  if (READERS.has(program)) return true
  switch (program) {
    case "git": {
      const sub = args.find((a) => !a.startsWith("-"))
      return sub !== undefined && GIT_READERS.has(sub) && !args.some((a) => a === "--output" || a.startsWith("--output="))
    }
    case "find":
      return !args.some((a) => FIND_WRITERS.has(a))
    case "sort":
      return !args.some((a) => a === "-o" || a.startsWith("--output"))
    default:
      return false
  }
}

/**
 * Whether `command` only reads (see the module doc). Anything not known to be a reader, including
 * `cd` (it changes the session's shell state), counts as writing.
 *
 * @category Predicates
 */
export const isReadOnly = (command: string): boolean => {
  const parsed = BashCommand.parse(command)
  return parsed.unsafe === undefined && parsed.commands.length > 0 && parsed.commands.every(readsOnly)
}
