/**
 * Reading prompts from input that is not a terminal (a pipe): a line a prompt, a line ending with
 * `\` goes on to the next, end of input exits; the next line also answers a permission question.
 * A terminal has the live input line instead (`TerminalInput`).
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"

/** What a read returns: a prompt, or the user leaving. @category Models */
export type Read = { readonly _tag: "Line"; readonly text: string } | { readonly _tag: "Exit" }

/** Options of an editor. @category Models */
export interface Options {
  readonly input: NodeJS.ReadableStream
  readonly output: NodeJS.WritableStream
  readonly prompt: string
}

/** Reads prompts, one at a time. @category Models */
export interface LineEditor {
  readonly read: () => Promise<Read>
  /** The next line, as the answer to a question (`undefined` at end of input). */
  readonly answer: () => Promise<string | undefined>
  readonly close: () => void
}

/**
 * An editor for input that is not a terminal: every line is a prompt (a line ending with `\`
 * goes on to the next); end of input exits.
 *
 * @category Constructors
 */
export const pipe = (options: Options): LineEditor => {
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
