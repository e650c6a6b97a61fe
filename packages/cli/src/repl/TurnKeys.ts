/**
 * The keyboard while a turn runs (a terminal in raw mode): Ctrl+C (or Esc) interrupts the turn, and
 * a permission question takes its answer as one key.
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"

/** An answer to a permission question. @category Models */
export type Answer = "once" | "always" | "deny"

/** The key of each answer. @category Constants */
export const ANSWER_KEYS: Readonly<Record<string, Answer>> = { y: "once", a: "always", n: "deny" }

/** A key as readline's keypress events give it. @category Models */
export interface Key {
  readonly text: string | undefined
  readonly key: { readonly name?: string; readonly ctrl?: boolean; readonly meta?: boolean; readonly shift?: boolean; readonly sequence?: string }
}

/** The keyboard of a running turn. @category Models */
export interface TurnKeys {
  /** Starts listening; `onInterrupt` runs on Ctrl+C or Esc (when no question is pending). */
  readonly start: (onInterrupt: () => void) => void
  /** Stops listening; returns the keys typed ahead meanwhile (for the next prompt). */
  readonly stop: () => ReadonlyArray<Key>
  /** Waits for the answer key of a question (Ctrl+C or Esc deny; an aborted `signal` resolves "deny"). */
  readonly ask: (signal: AbortSignal) => Promise<Answer>
}

type Input = NodeJS.ReadStream

/** Keys from a terminal's stdin. @category Constructors */
export const terminal = (input: Input): TurnKeys => {
  readline.emitKeypressEvents(input)
  let interrupt: (() => void) | undefined
  let question: ((answer: Answer) => void) | undefined
  let listening = false
  let typed: Array<Key> = []
  const onKey = (text: string | undefined, key: Key["key"] | undefined) => {
    const ctrlC = key?.ctrl === true && key.name === "c"
    const escape = key?.name === "escape"
    if (question !== undefined) {
      const answer = ctrlC || escape ? "deny" : ANSWER_KEYS[(text ?? "").toLowerCase()]
      if (answer === undefined) return
      const resolve = question
      question = undefined
      resolve(answer)
      if (ctrlC) interrupt?.()
      return
    }
    if (ctrlC || escape) return interrupt?.()
    // Anything else is typed ahead: it goes to the next prompt.
    if (key !== undefined) typed.push({ text, key })
  }
  const start = (onInterrupt: () => void) => {
    interrupt = onInterrupt
    if (listening) return
    listening = true
    input.setRawMode?.(true)
    input.on("keypress", onKey)
    input.resume()
  }
  const stop = () => {
    interrupt = undefined
    const ahead = typed
    typed = []
    if (!listening) return ahead
    listening = false
    input.off("keypress", onKey)
    input.setRawMode?.(false)
    input.pause()
    return ahead
  }
  const ask = (signal: AbortSignal) =>
    new Promise<Answer>((resolve) => {
      if (signal.aborted) return resolve("deny")
      const done = (answer: Answer) => {
        signal.removeEventListener("abort", onAbort)
        resolve(answer)
      }
      const onAbort = () => {
        question = undefined
        done("deny")
      }
      signal.addEventListener("abort", onAbort, { once: true })
      question = done
    })
  return { start, stop, ask }
}
