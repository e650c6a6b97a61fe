/**
 * A custom command's prompt: its body with the invocation's arguments substituted (`$ARGUMENTS`,
 * `$0`, `$1`, ..., `$ARGUMENTS[0]`, ...), after the tag block that names the command, as Claude Code
 * sends it.
 *
 * @since 0.1.0
 */
import { TextBlock, UserMessage } from "../message/Message.js"

/**
 * The arguments split as a shell would: whitespace separates them, single and double quotes group
 * (and are removed), a backslash escapes the next character (inside double quotes: `"`, `\`, `$`,
 * a backquote). An unclosed quote runs to the end.
 *
 * @category Parsing
 */
export const splitArguments = (args: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current = ""
  let inWord = false
  let quote: string | undefined
  for (let i = 0; i < args.length; i++) {
    const c = args[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
      else current += c
    } else if (quote === "\"") {
      if (c === "\"") quote = undefined
      else if (c === "\\" && i + 1 < args.length && "\"\\$`".includes(args[i + 1]!)) current += args[++i]
      else current += c
    } else if (/\s/.test(c)) {
      if (inWord) out.push(current)
      current = ""
      inWord = false
    } else {
      inWord = true
      if (c === "'" || c === "\"") quote = c
      else if (c === "\\" && i + 1 < args.length) current += args[++i]
      else current += c
    }
  }
  if (inWord) out.push(current)
  return out
}

const PLACEHOLDER = /\\?\$(?:ARGUMENTS\[(\d+)\]|ARGUMENTS|(\d+))/g

/**
 * The body with its placeholders filled, in one pass (text from the arguments is not searched
 * again): `$ARGUMENTS` is `args`; `$N` and `$ARGUMENTS[N]` the N-th shell-split argument (0-based),
 * left as written when there is none; a backslash before one (`\$ARGUMENTS`) keeps it literal.
 * Without any placeholder, `\n\nARGUMENTS: args` is appended when there are arguments.
 *
 * @category Rendering
 */
export const substitute = (body: string, args: string): string => {
  const positional = splitArguments(args)
  let found = false
  const text = body.replace(PLACEHOLDER, (match: string, indexed: string | undefined, numbered: string | undefined) => {
    if (match.startsWith("\\")) return match.slice(1)
    found = true
    const index = indexed ?? numbered
    if (index === undefined) return args
    return positional[Number(index)] ?? match
  })
  return !found && args !== "" ? `${text}\n\nARGUMENTS: ${args}` : text
}

/**
 * The prompt of `/name args`: a user message with the tag block, then the substituted body (left
 * out when empty or blank).
 *
 * @category Rendering
 */
export const expand = (name: string, body: string, args: string): UserMessage => {
  const raw = args.trim()
  const tags = `<command-message>${name}</command-message>\n<command-name>/${name}</command-name>\n` +
    (raw === "" ? "" : `<command-args>${raw}</command-args>\n`)
  const text = substitute(body, raw)
  const content = [new TextBlock({ text: tags })]
  if (text.trim() !== "") content.push(new TextBlock({ text }))
  return new UserMessage({ content })
}

