/**
 * Just enough of the shell's grammar to judge a Bash command against permission rules: the simple
 * commands it chains (`;`, `&&`, `||`, `|`, `&`, newlines), and the constructs that can run or
 * write something a prefix rule cannot see (`$(...)`, backticks, `<(...)`, redirections to files).
 * Quotes are honoured: `echo "a; b"` is one command.
 *
 * @since 0.1.0
 */

/** A command split into its simple commands, and what makes it unsafe to allow by prefix. @category Models */
export interface Parsed {
  readonly commands: ReadonlyArray<string>
  /** Why no prefix rule may allow this command (command substitution, redirection, ...), if so. */
  readonly unsafe: string | undefined
}

/** Splits `command` (see the module doc). @category Parsing */
export const parse = (command: string): Parsed => {
  const commands: Array<string> = []
  let current = ""
  let unsafe: string | undefined
  let quote: "'" | "\"" | undefined
  const flush = () => {
    const c = current.trim()
    if (c.length > 0) commands.push(c)
    current = ""
  }
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!
    const next = command[i + 1]
    if (quote === "'") {
      current += ch
      if (ch === "'") quote = undefined
      continue
    }
    if (ch === "\\" && next !== undefined) {
      current += ch + next
      i++
      continue
    }
    if (quote === "\"") {
      current += ch
      if (ch === "\"") quote = undefined
      else if (ch === "`" || (ch === "$" && next === "(")) unsafe ??= "command substitution"
      continue
    }
    if (ch === "'" || ch === "\"") {
      quote = ch
      current += ch
      continue
    }
    if (ch === "`" || (ch === "$" && next === "(")) unsafe ??= "command substitution"
    if ((ch === "<" || ch === ">") && next === "(") unsafe ??= "process substitution"
    if (ch === ">" || ch === "<") {
      // `2>&1` and `>&2` only join streams; anything else reads or writes a file.
      const rest = command.slice(i + 1).trimStart()
      const joins = ch === ">" && (next === "&" && /^&\d/.test(command.slice(i + 1)))
      if (!joins && !(ch === ">" && rest.startsWith("/dev/null"))) unsafe ??= "redirection"
    }
    if (ch === ";" || ch === "\n" || ch === "|" || (ch === "&" && command[i - 1] !== ">" && next !== ">")) {
      flush()
      if ((ch === "|" || ch === "&") && next === ch) i++
      continue
    }
    current += ch
  }
  flush()
  return { commands, unsafe }
}

/**
 * Whether a simple command matches a rule's content: `prefix:*` matches the prefix alone or followed
 * by a space and anything; anything else must match exactly.
 *
 * @category Matching
 */
export const matchesContent = (simple: string, content: string): boolean => {
  const normalized = simple.replace(/\s+/g, " ").trim()
  if (content.endsWith(":*")) {
    const prefix = content.slice(0, -2).trim()
    return normalized === prefix || normalized.startsWith(prefix + " ")
  }
  return normalized === content.replace(/\s+/g, " ").trim()
}
