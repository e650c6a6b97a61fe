/**
 * The question the REPL asks before it reads a folder for the first time: whether the user trusts
 * its files, since a project's `.mcp.json`, hooks, `apiKeyHelper` and git configuration can start
 * programs. Asked once per folder (the answer yes is kept in `$KEEL_HOME/trusted-folders.json`; a
 * trusted folder's subfolders are trusted with it); no leaves before anything of the folder runs.
 * In a terminal one key answers (y or Enter: yes; n, Esc, Ctrl+C, Ctrl+D: no); from a pipe the
 * first line does (`y` or `yes`), and the lines after it are the prompts as usual.
 *
 * @since 0.1.0
 */
import * as TrustedFolders from "../settings/TrustedFolders.js"
import type * as Style from "./Style.js"

/** The answer a key gives in a terminal; `undefined` for a key that is no answer. @category Parsing */
export const keyAnswer = (key: string): boolean | undefined => {
  if (key === "y" || key === "Y" || key === "\r" || key === "\n") return true
  if (key === "n" || key === "N" || key === "\x1b" || key === "\x03" || key === "\x04") return false
  return undefined
}

/** The answer a line from a pipe gives. @category Parsing */
export const lineAnswer = (line: string | undefined): boolean => line !== undefined && /^\s*y(es)?\s*$/i.test(line)

/** Where the question is asked. @category Models */
export interface Terminal {
  readonly input: NodeJS.ReadStream
  readonly output: NodeJS.WriteStream
}

/** Reads one key in raw mode. */
const readKey = (input: NodeJS.ReadStream): Promise<boolean> =>
  new Promise((resolve) => {
    const onData = (data: Buffer | string) => {
      for (const key of String(data)) {
        const answer = keyAnswer(key)
        if (answer === undefined) continue
        input.off("data", onData)
        input.off("end", onEnd)
        input.setRawMode?.(false)
        input.pause()
        return resolve(answer)
      }
    }
    const onEnd = () => resolve(false)
    input.setRawMode?.(true)
    input.on("data", onData)
    input.once("end", onEnd)
    input.resume()
  })

/** Reads one line from a pipe, giving back what follows it. */
const readLine = (input: NodeJS.ReadStream): Promise<string | undefined> =>
  new Promise((resolve) => {
    let text = ""
    const done = (line: string | undefined) => {
      input.off("data", onData)
      input.off("end", onEnd)
      input.pause()
      resolve(line)
    }
    const onData = (data: Buffer | string) => {
      text += String(data)
      const end = text.indexOf("\n")
      if (end < 0) return
      const rest = text.slice(end + 1)
      done(text.slice(0, end))
      if (rest !== "") input.unshift(Buffer.from(rest, "utf8"))
    }
    const onEnd = () => done(text === "" ? undefined : text)
    input.on("data", onData)
    input.once("end", onEnd)
    input.resume()
  })

/**
 * Whether the REPL may go on in `cwd`: yes at once when it is trusted; otherwise the question is
 * asked, and a yes is remembered under `home` (`$KEEL_HOME`).
 *
 * @category Running
 */
export const ensureTrusted = async (term: Terminal, style: Style.Style, home: string, cwd: string): Promise<boolean> => {
  if (TrustedFolders.isTrusted(home, cwd)) return true
  const tty = term.input.isTTY === true && term.output.isTTY === true
  term.output.write(
    `${style.bold("Do you trust the files in this folder?")}\n  ${cwd}\n` +
      style.dim(
        "Keel reads this folder's settings, and they can start programs: MCP servers (.mcp.json), hooks,\n" +
          "an apiKeyHelper, git configuration. Trust only a folder whose contents you know.\n"
      ) +
      (tty ? style.dim("  [y] yes, trust this folder (Enter)   [n] no, exit (Esc)\n") : style.dim("  (answer y or n on the first line)\n"))
  )
  const answer = tty ? await readKey(term.input) : lineAnswer(await readLine(term.input))
  if (!answer) {
    term.output.write(style.dim("Not trusted: nothing in this folder was run.\n"))
    return false
  }
  TrustedFolders.trust(home, cwd)
  term.output.write(style.dim(`Trusted (kept in ${TrustedFolders.fileOf(home)}).\n`))
  return true
}
