/**
 * Which Bash commands only read: every simple command of the chain is a known reader (`ls`, `cat`,
 * `grep`, `git status`, ...) with no option that writes or runs something else, judged on the same
 * syntax tree as permission rules (`BashCommand.analyse`: no substitution, expansion or redirection
 * to a file). Such a call may run beside other concurrency-safe calls, as Claude Code runs
 * read-only Bash commands in parallel. Permissions do not use this: Bash still asks. Before the
 * bash grammar has loaded, nothing counts as read-only (the call runs alone).
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

const readsOnly = (words: ReadonlyArray<BashCommand.Word>): boolean => {
  const [program, ...args] = words.map((w) => w.value)
  if (program === undefined) return false
  if (READERS.has(program)) return true
  // Past here options matter, and a pattern (`*`) could expand to `-delete` or `--output=x`.
  if (words.some((w) => !w.literal)) return false
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
  const analysis = BashCommand.analyse(command)
  return analysis._tag === "Analysed" && analysis.commands.length > 0 && analysis.commands.every(readsOnly)
}
