import { assert, describe, it } from "@effect/vitest"
import * as os from "node:os"
import * as ShellCommand from "../../src/repl/ShellCommand.js"

describe("ShellCommand", () => {
  it("reads a line starting with ! as a command", () => {
    assert.strictEqual(ShellCommand.commandOf("! ls -la "), "ls -la")
    assert.isUndefined(ShellCommand.commandOf("ls !"))
    assert.isUndefined(ShellCommand.commandOf(" !ls"))
  })

  it("takes its time limit from the Bash tool's variables, positive integers only", () => {
    assert.strictEqual(ShellCommand.timeoutFrom({}), ShellCommand.DEFAULT_TIMEOUT_MS)
    assert.strictEqual(ShellCommand.timeoutFrom({ KEEL_TOOL_TIMEOUT_MS: "5000" }), 5000)
    assert.strictEqual(ShellCommand.timeoutFrom({ KEEL_TOOL_TIMEOUT_MS: "5000", KEEL_TOOL_TIMEOUT_MS_BASH: "700" }), 700)
    assert.strictEqual(ShellCommand.timeoutFrom({ KEEL_TOOL_TIMEOUT_MS_BASH: "0" }), ShellCommand.DEFAULT_TIMEOUT_MS)
    assert.strictEqual(ShellCommand.timeoutFrom({ KEEL_TOOL_TIMEOUT_MS_BASH: "1e9" }), ShellCommand.DEFAULT_TIMEOUT_MS)
  })

  it("gives the model the command, its output and how it ended before the prompt; the prompt is shown without them", () => {
    const ok = { stdout: "a\n", stderr: "", code: 0, stopped: undefined }
    const failed = { stdout: "", stderr: "no such file", code: 2, stopped: undefined }
    const sent = ShellCommand.context("ls", ok, 1000) + ShellCommand.context("cat x", failed, 1000) + "what now?"
    assert.strictEqual(
      sent,
      "<bash-input>ls</bash-input>\n<bash-stdout>a</bash-stdout><bash-stderr></bash-stderr>\n\n" +
        "<bash-input>cat x</bash-input>\n<bash-stdout></bash-stdout><bash-stderr>no such file\nExit code 2.</bash-stderr>\n\n" +
        "what now?"
    )
    assert.strictEqual(ShellCommand.shown(sent), "what now?")
    assert.strictEqual(ShellCommand.shown("plain <bash-input>x</bash-input>"), "plain <bash-input>x</bash-input>")
  })

  it("runs the command in the folder given, with its output and exit code", async () => {
    const outcome = await ShellCommand.run("pwd; echo err >&2; exit 3", os.tmpdir(), 10_000, new AbortController().signal)
    assert.deepStrictEqual(outcome, { stdout: `${os.tmpdir()}\n`, stderr: "err\n", code: 3, stopped: undefined })
  })

  it("an aborted command is stopped, its whole process group", async () => {
    const controller = new AbortController()
    controller.abort()
    const outcome = await ShellCommand.run("sleep 30 & sleep 30; echo never", os.tmpdir(), 60_000, controller.signal)
    assert.strictEqual(outcome.stopped, "interrupted")
    assert.strictEqual(outcome.stdout, "")
    assert.strictEqual(ShellCommand.ending(outcome, 60_000), "Interrupted.")
  })
})
