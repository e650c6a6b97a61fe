/**
 * The REPL's permission question, a step of its own between a tool call and its run: the call's
 * line first (`● Bash(npm test)`, through `Calls.asking`, which also holds the call's timer until
 * the answer), then what the call says it does and exactly what it would do (`CallPreview`: the
 * command, or the diff), then the question. One key answers in a terminal (one line from a pipe):
 * `y` yes once; `a` yes always, for the rules shown (`AlwaysRule`, added to the session's policy for
 * the rest of the session); `n` no, then a reason typed on one line (Enter alone: none), which the
 * model is told; Esc (or Ctrl+C, which also interrupts the turn) no, without a reason. Questions
 * come one at a time.
 *
 * @since 0.1.0
 */
import type { Permissions } from "@keel/core"
import * as AlwaysRule from "./AlwaysRule.js"
import * as CallPreview from "./CallPreview.js"
import type * as Style from "./Style.js"
import * as ToolLine from "./ToolLine.js"

/** An answer to a permission question (`no`: deny and ask why; `deny`: deny without a reason). @category Models */
export type Answer = "once" | "always" | "no" | "deny"

/** The key of each answer. @category Constants */
export const ANSWER_KEYS: Readonly<Record<string, Answer>> = { y: "once", a: "always", n: "no" }

/** Answers by key, in a terminal. @category Models */
export interface Keys {
  /** Waits for the answer key of a question (Ctrl+C or Esc deny; an aborted `signal` resolves "deny"). */
  readonly ask: (signal: AbortSignal) => Promise<Answer>
  /** Reads one line after `prompt` (Enter ends it; Esc, Ctrl+C or an aborted `signal` give ""). */
  readonly reason: (prompt: string, signal: AbortSignal) => Promise<string>
}

/**
 * The answer a key gives (`undefined`: the key is no answer, the question waits on): y, a, n, or
 * no without a reason for Ctrl+C and Esc.
 *
 * @category Deciding
 */
export const answerOf = (
  text: string | undefined,
  key: { readonly name?: string | undefined; readonly ctrl?: boolean | undefined } | undefined
): Answer | undefined =>
  (key?.ctrl === true && key.name === "c") || key?.name === "escape" ? "deny" : ANSWER_KEYS[(text ?? "").toLowerCase()]

/** How a question ended, for the call's line. @category Models */
export type Answered =
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Denied"; readonly reason: string | undefined }

/** The tool calls as shown: the question tells them when it asks and how it was answered. @category Models */
export interface Calls {
  /** The question is about to be shown: the call's line goes first (if not shown yet), its timer waits. */
  readonly asking: (toolUseId: string, toolName: string, input: unknown) => void
  /** The question was answered: the call's timer starts (allowed), or its denial is kept for its outcome line. */
  readonly answered: (toolUseId: string, answered: Answered) => void
}

/** Where the question is asked and how it is answered. @category Models */
export interface Options {
  readonly style: Style.Style
  readonly cwd: string
  /** Prints a line of the question. */
  readonly say: (text: string) => void
  /** The terminal's keys (one key answers); without them, `line` reads the answer. */
  readonly keys: Keys | undefined
  /** The next line typed (from a pipe): `y`, `a`, or `n` and an optional reason after it. */
  readonly line: () => Promise<string | undefined>
  /** The calls as shown (the REPL's renderer). */
  readonly calls: () => Calls | undefined
}

/** The prompt of the reason line after `n`. @category Constants */
export const REASON_PROMPT = "Why not? (Enter to skip) "

/**
 * What the model is told of a denial: the call, and the user's reason when they gave one.
 *
 * @category Rendering
 */
export const denialMessage = (label: string, reason: string | undefined): string =>
  reason === undefined
    ? `The user denied ${label}. Ask them what to do instead, or go on without it.`
    : `The user denied ${label}, and said why: ${reason}\nTake this into account before going on.`

/** An answer and its reason, read from one line of a pipe (`n too risky`). */
const fromLine = (line: string | undefined): { readonly answer: Answer; readonly reason: string | undefined } => {
  const text = (line ?? "n").trim()
  const answer = ANSWER_KEYS[text.slice(0, 1).toLowerCase()] ?? "deny"
  const reason = answer === "no" ? text.slice(1).trim() : ""
  return { answer, reason: reason === "" ? undefined : reason }
}

/** The `canUseTool` callback that asks the user. @category Constructors */
export const make = (options: Options): Permissions.CanUseTool => {
  const { say, style } = options
  // Exact calls "always" allowed where no rule could say it.
  const allowedExact = new Set<string>()
  let turn: Promise<unknown> = Promise.resolve()

  const ask: Permissions.CanUseTool = async (toolName, toolInput, { reason, signal, toolUseId }) => {
    const calls = options.calls()
    if (allowedExact.has(AlwaysRule.exactKey(toolName, toolInput))) {
      calls?.answered(toolUseId, { _tag: "Allowed" })
      return { behavior: "allow" }
    }
    const always = await AlwaysRule.alwaysFor(toolName, toolInput, options.cwd)
    if (signal.aborted) return { behavior: "deny", message: "The question was withdrawn." }
    const label = ToolLine.describeCall(toolName, toolInput, options.cwd)
    calls?.asking(toolUseId, toolName, toolInput)
    for (const line of CallPreview.lines(toolName, toolInput, options.cwd, style)) say(line)
    say(`${style.yellow("?")} ${style.bold(`Allow ${label}?`)} ${style.dim(`(${reason})`)}`)
    say(style.dim(`  [y] yes, once   [a] yes, and always this session: ${AlwaysRule.describe(always)}   [n] no, and say why   [Esc] no`))
    let answer: Answer
    let because: string | undefined
    if (options.keys !== undefined) {
      answer = await options.keys.ask(signal)
      if (answer === "no" && !signal.aborted) because = (await options.keys.reason(style.yellow(REASON_PROMPT), signal)).trim() || undefined
    } else {
      ;({ answer, reason: because } = fromLine(await options.line()))
    }
    if (answer === "no" || answer === "deny") {
      calls?.answered(toolUseId, { _tag: "Denied", reason: because })
      return { behavior: "deny", message: denialMessage(label, because) }
    }
    calls?.answered(toolUseId, { _tag: "Allowed" })
    if (answer === "once") {
      say(style.dim("  → allowed once"))
      return { behavior: "allow" }
    }
    say(style.dim(`  → allowed for the rest of this session: ${AlwaysRule.describe(always)}`))
    if (always._tag === "ExactCall") {
      allowedExact.add(always.key)
      return { behavior: "allow" }
    }
    return { behavior: "allow", updatedPermissions: [always.update] }
  }

  // One question at a time: a question waits for the one before it to be answered.
  return (toolName, toolInput, context) => {
    const answered = turn.then(() => ask(toolName, toolInput, context))
    turn = answered.catch(() => undefined)
    return answered
  }
}
