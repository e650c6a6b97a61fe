/**
 * The REPL's screen tests' common start: `keel` in a pseudo-terminal (`Terminal`) in a fresh
 * project (or `dir`), with `KEEL_HOME` inside it, against a loopback fake API playing `script`,
 * once its input line shows; and typing a line.
 */
import { envFor, fake, workdir } from "./KeelProcess.js"
import type * as FakeAnthropic from "./FakeAnthropic.js"
import * as path from "node:path"
import * as Terminal from "./Terminal.js"

/** The input line's prompt. */
export const PROMPT = "› "

/** Options of {@link repl}. */
export interface ReplOptions {
  readonly env?: Record<string, string>
  readonly args?: ReadonlyArray<string>
  readonly dir?: string
}

/** A REPL in a fresh project (or `dir`) against a fake API playing `script`, its input line shown. */
export const repl = async (script: ReadonlyArray<FakeAnthropic.ScriptItem>, options: ReplOptions = {}) => {
  const server = await fake(script)
  const dir = options.dir ?? workdir()
  const home = path.join(dir, ".keel-home")
  const term = Terminal.open({
    cwd: dir,
    env: { ...envFor(server), KEEL_HOME: home, ...options.env },
    ...(options.args !== undefined ? { args: options.args } : {})
  })
  await term.waitFor(PROMPT)
  return { server, term, dir, home }
}

/** Types `text` and Enter. */
export const enter = (term: Terminal.Terminal, text: string): void => {
  term.type(text)
  term.send("Enter")
}
