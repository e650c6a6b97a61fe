/**
 * The REPL's permission question: a tool call the policy asks about is shown with the reason, and
 * answered with one key in a terminal (one line from a pipe): yes once, yes for the rest of the
 * session ("always", remembered by a Bash command as written or any other tool by name), or no.
 *
 * @since 0.1.0
 */
import type { Permissions } from "@keel/core"
import type * as Style from "./Style.js"
import * as ToolLine from "./ToolLine.js"

/** An answer to a permission question. @category Models */
export type Answer = "once" | "always" | "deny"

/** The key of each answer. @category Constants */
export const ANSWER_KEYS: Readonly<Record<string, Answer>> = { y: "once", a: "always", n: "deny" }

/** Answers by key, in a terminal. @category Models */
export interface Keys {
  /** Waits for the answer key of a question (Ctrl+C or Esc deny; an aborted `signal` resolves "deny"). */
  readonly ask: (signal: AbortSignal) => Promise<Answer>
}

/**
 * The answer a key gives (`undefined`: the key is no answer, the question waits on): y, a, n, or
 * no for Ctrl+C and Esc.
 *
 * @category Deciding
 */
export const answerOf = (
  text: string | undefined,
  key: { readonly name?: string | undefined; readonly ctrl?: boolean | undefined } | undefined
): Answer | undefined =>
  (key?.ctrl === true && key.name === "c") || key?.name === "escape" ? "deny" : ANSWER_KEYS[(text ?? "").toLowerCase()]

/** Where the question is asked and how it is answered. @category Models */
export interface Options {
  readonly style: Style.Style
  readonly cwd: string
  /** Prints a line of the question. */
  readonly say: (text: string) => void
  /** The terminal's keys (one key answers); without them, `line` reads the answer. */
  readonly keys: Keys | undefined
  /** The next line typed (from a pipe). */
  readonly line: () => Promise<string | undefined>
}

/** The key "always" remembers a call by: a Bash command as written, any other tool by name. @category Models */
export const alwaysKey = (toolName: string, input: unknown): string => {
  const command = typeof input === "object" && input !== null ? (input as { command?: unknown }).command : undefined
  return toolName === "Bash" && typeof command === "string" ? `Bash(${command.trim()})` : toolName
}

/** The `canUseTool` callback that asks the user (its "always" answers last as long as it does). @category Constructors */
export const make = (options: Options): Permissions.CanUseTool => {
  const { say, style } = options
  const allowedAlways = new Set<string>()
  return async (toolName, toolInput, { reason, signal }) => {
    const key = alwaysKey(toolName, toolInput)
    if (allowedAlways.has(key)) return { behavior: "allow" }
    const label = ToolLine.describeCall(toolName, toolInput, options.cwd)
    say(`${style.yellow("?")} ${style.bold(`Allow ${label}?`)} ${style.dim(`(${reason})`)}`)
    say(style.dim(`  [y] yes, once   [a] yes, and don't ask again for ${key} this session   [n] no (Esc)`))
    const answer: Answer = options.keys !== undefined
      ? await options.keys.ask(signal)
      : ANSWER_KEYS[((await options.line()) ?? "n").trim().toLowerCase().slice(0, 1)] ?? "deny"
    if (answer === "always") allowedAlways.add(key)
    say(style.dim(`  → ${answer === "deny" ? "denied" : answer === "always" ? `allowed for this session` : "allowed once"}`))
    return answer === "deny"
      ? { behavior: "deny", message: `The user denied ${label}. Ask them what to do instead, or go on without it.` }
      : { behavior: "allow" }
  }
}
