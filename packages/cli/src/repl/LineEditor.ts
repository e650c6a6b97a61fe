/**
 * Reading prompts: Node's readline (line editing with the usual Emacs keys, history on ↑/↓ and
 * Ctrl+R-free search by prefix, Tab completion) for a terminal; a plain line queue when stdin is a
 * pipe. Multi-line input: end a line with `\` to go on, or paste several lines (lines that arrive
 * together are one prompt). Ctrl+C clears the line; on an empty prompt, a second Ctrl+C in a row
 * exits, as does Ctrl+D.
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"

/** What a read returns: a prompt, or the user leaving. @category Models */
export type Read = { readonly _tag: "Line"; readonly text: string } | { readonly _tag: "Exit" }

/** Completes the text before the cursor: candidates and the part they replace (readline's shape). @category Models */
export type Completer = (line: string) => [Array<string>, string]

/** Options of an editor. @category Models */
export interface Options {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown }
  readonly output: NodeJS.WritableStream
  readonly prompt: string
  readonly continuation: string
  readonly completer: Completer
  /** Earlier entries, oldest first. */
  readonly history: ReadonlyArray<string>
  /** Called with each new entry, to save it. */
  readonly onEntry: (entry: string) => void
  /** Printed on the first Ctrl+C at an empty prompt. */
  readonly exitHint: string
}

/** A key typed while no prompt was open, to replay into the next one. @category Models */
export interface TypedKey {
  readonly text: string | undefined
  readonly key: { readonly name?: string; readonly ctrl?: boolean; readonly meta?: boolean; readonly sequence?: string }
}

/** The most entries kept. @category Constants */
export const HISTORY_SIZE = 1_000

/** Reads prompts, one at a time. @category Models */
export interface LineEditor {
  /** Reads a prompt; `typedAhead` (keys typed while the last turn ran) are replayed into it first. */
  readonly read: (typedAhead?: ReadonlyArray<TypedKey>) => Promise<Read>
  /** The next line of a pipe, as the answer to a question (`undefined` at end of input); terminals answer by key instead. */
  readonly answer?: () => Promise<string | undefined>
  readonly close: () => void
}

/**
 * An editor for a terminal: a fresh readline interface per prompt (so a running turn owns the
 * keyboard), sharing one history.
 *
 * @category Constructors
 */
export const terminal = (options: Options): LineEditor => {
  // readline keeps its history newest first.
  let history = [...options.history].reverse().slice(0, HISTORY_SIZE)
  let open: readline.Interface | undefined
  const read = (typedAhead: ReadonlyArray<TypedKey> = []) =>
    new Promise<Read>((resolve) => {
      const rl = readline.createInterface({
        input: options.input,
        output: options.output,
        terminal: true,
        history: [...history],
        historySize: HISTORY_SIZE,
        removeHistoryDuplicates: true,
        completer: options.completer,
        tabSize: 2
      })
      open = rl
      const lines: Array<string> = []
      let settled = false
      let flushing = false
      let ctrlC = false
      const finish = (result: Read) => {
        if (settled) return
        settled = true
        open = undefined
        rl.close()
        resolve(result)
      }
      const prompt = () => {
        rl.setPrompt(lines.length === 0 ? options.prompt : options.continuation)
        rl.prompt()
      }
      rl.on("history", (h: Array<string>) => (history = [...h]))
      rl.on("line", (line) => {
        ctrlC = false
        if (line.endsWith("\\")) {
          lines.push(line.slice(0, -1))
          return prompt()
        }
        lines.push(line)
        // Lines that arrive in one go (a paste) are one prompt: submit once this input is consumed.
        if (flushing) return
        flushing = true
        setImmediate(() => {
          flushing = false
          if (rl.line !== "") return prompt()
          const text = lines.join("\n")
          if (text.trim() === "") {
            lines.length = 0
            return prompt()
          }
          if (lines.length > 1) {
            history = [text, ...history.filter((h) => h !== text)].slice(0, HISTORY_SIZE)
          }
          options.onEntry(text)
          finish({ _tag: "Line", text })
        })
      })
      rl.on("SIGINT", () => {
        if (rl.line !== "" || lines.length > 0) {
          lines.length = 0
          ctrlC = false
          options.output.write("^C\n")
          ;(rl as unknown as { line: string }).line = ""
          return prompt()
        }
        if (ctrlC) return finish({ _tag: "Exit" })
        ctrlC = true
        options.output.write(`\n${options.exitHint}\n`)
        prompt()
      })
      rl.on("close", () => finish(lines.length > 0 ? { _tag: "Line", text: lines.join("\n") } : { _tag: "Exit" }))
      prompt()
      for (const { key, text } of typedAhead) {
        if (settled) break
        rl.write(text, key as readline.Key)
      }
    })
  return { read, close: () => open?.close() }
}

/**
 * An editor for input that is not a terminal: every line is a prompt (a line ending with `\`
 * goes on to the next); end of input exits.
 *
 * @category Constructors
 */
export const pipe = (options: Pick<Options, "input" | "output" | "prompt">): LineEditor => {
  const rl = readline.createInterface({ input: options.input, terminal: false })
  const queue: Array<string> = []
  const waiting: Array<(line: string | undefined) => void> = []
  let ended = false
  rl.on("line", (line) => {
    const next = waiting.shift()
    if (next !== undefined) next(line)
    else queue.push(line)
  })
  rl.on("close", () => {
    ended = true
    for (const w of waiting.splice(0)) w(undefined)
  })
  const nextLine = () =>
    new Promise<string | undefined>((resolve) => {
      if (queue.length > 0) return resolve(queue.shift())
      if (ended) return resolve(undefined)
      waiting.push(resolve)
    })
  const read = async (): Promise<Read> => {
    const lines: Array<string> = []
    options.output.write(options.prompt)
    for (;;) {
      const line = await nextLine()
      if (line === undefined) return lines.length > 0 ? { _tag: "Line", text: lines.join("\n") } : { _tag: "Exit" }
      if (line.endsWith("\\")) {
        lines.push(line.slice(0, -1))
        continue
      }
      lines.push(line)
      const text = lines.join("\n")
      if (text.trim() === "") {
        lines.length = 0
        continue
      }
      options.output.write(`${text}\n`)
      return { _tag: "Line", text }
    }
  }
  return { read, answer: nextLine, close: () => rl.close() }
}
