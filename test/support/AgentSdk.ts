/**
 * The real Claude Agent SDK's `query()` run on a CLI: `keel`, or Claude Code's own binary (the
 * SDK's optional dependency), each against a loopback fake of the Messages API in a fresh project
 * and home. The same case run on both shows Keel behaves as Claude Code does for the SDK's host.
 */
import { query } from "@anthropic-ai/claude-agent-sdk"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as FakeAnthropic from "./FakeAnthropic.js"
import { envFor, keel } from "./KeelProcess.js"

/** Claude Code's binary, as the SDK's optional dependency installs it (absent on other platforms). */
export const claudeCode = path.resolve(
  import.meta.dirname,
  "..",
  "..",
  "node_modules",
  "@anthropic-ai",
  `claude-agent-sdk-${process.platform}-${process.arch}`,
  "claude"
)

/** A CLI the SDK can run. @category Models */
export interface Cli {
  readonly name: "keel" | "claude-code"
  readonly executable: string
  /** Why it cannot run here (the binary is absent), if it cannot. */
  readonly unavailable: string | undefined
}

/** The CLIs to run each case on: keel always, Claude Code where its binary is installed. */
export const clis: ReadonlyArray<Cli> = [
  { name: "keel", executable: keel, unavailable: undefined },
  {
    name: "claude-code",
    executable: claudeCode,
    unavailable: fs.existsSync(claudeCode)
      ? undefined
      : `Claude Code's binary is not installed at ${claudeCode} (the SDK's optional dependency for this platform)`
  }
]

/** The SDK's query options. */
export type Options = NonNullable<Parameters<typeof query>[0]["options"]>

/** A model both CLIs know (Claude Code's default differs from Keel's). */
export const MODEL = "claude-sonnet-4-6"

/**
 * The SDK's `query()` of `prompt` on `cli` in `dir`, against `server`: a fresh `HOME` (Claude Code
 * reads and writes its config there) and `KEEL_HOME`, no non-essential traffic. Returns the query
 * (the caller iterates it).
 */
export const start = (
  cli: Cli,
  dir: string,
  server: FakeAnthropic.FakeAnthropic,
  prompt: Parameters<typeof query>[0]["prompt"],
  options: Options = {}
) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-home-"))
  return query({
    prompt,
    options: {
      pathToClaudeCodeExecutable: cli.executable,
      cwd: dir,
      model: MODEL,
      env: {
        ...process.env,
        ...envFor(server),
        HOME: home,
        KEEL_HOME: path.join(home, ".keel"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1"
      },
      ...options
    }
  })
}

/** Runs {@link start} to the end: every message, or the error it threw. */
export const run = async (
  cli: Cli,
  dir: string,
  server: FakeAnthropic.FakeAnthropic,
  options: Options = {},
  prompt = "go"
): Promise<{ messages: Array<any>; error: Error | undefined }> => {
  const messages: Array<any> = []
  let error: Error | undefined
  try {
    for await (const message of start(cli, dir, server, prompt, options)) messages.push(message)
  } catch (e) {
    error = e as Error
  }
  return { messages, error }
}

/** The result message of a run. */
export const resultOf = (messages: ReadonlyArray<any>) => messages.find((m) => m.type === "result")

/** A request's system prompt as one text. */
export const systemText = (body: any): string =>
  typeof body.system === "string" ? body.system : (body.system ?? []).map((b: any) => b.text).join("\n")
