/**
 * End to end: command hooks from settings files, run by the built `keel -p` against the loopback
 * fake of the Messages API. A PreToolUse hook that blocks a Bash call (exit 2) and one that rewrites
 * its input, a UserPromptSubmit hook that adds context, a Stop hook that makes the turn go on once,
 * a hook that times out without hanging the turn, the inputs hooks get, `--include-hook-events`,
 * and settings whose hooks Keel cannot run (exit 2, naming the file and key).
 *
 * The settings are the project's `.claude/settings.json`, as a Claude Code project has them.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

/** Writes the project's `.claude/settings.json` with `hooks` (and Bash allowed, so only hooks can stop it). */
const settings = (dir: string, hooks: unknown): void => {
  fs.mkdirSync(path.join(dir, ".claude"), { recursive: true })
  fs.writeFileSync(path.join(dir, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash"] }, hooks }))
}

const command = (cmd: string, timeout?: number) => ({ type: "command", command: cmd, ...(timeout === undefined ? {} : { timeout }) })

/** A script file in `dir` (so hooks need no quoting), returned as the command that runs it. */
const script = (dir: string, name: string, body: string): string => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 })
  return file
}

const keelP = (dir: string, server: FakeAnthropic.FakeAnthropic, extra: ReadonlyArray<string> = []) =>
  run(["-p", "go", "--output-format", "stream-json", "--verbose", ...extra], {
    cwd: dir,
    env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }
  })

/** The tool_result blocks the model was sent in request `index`. */
const toolResults = (server: FakeAnthropic.FakeAnthropic, index: number): Array<any> =>
  server.requests[index]!.body.messages.flatMap((m: any) =>
    Array.isArray(m.content) ? m.content.filter((b: any) => b.type === "tool_result") : []
  )

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : (content as Array<any>).map((b) => b.text ?? "").join("\n")

const bashThenDone = (cmd: string) => [
  FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: cmd }, id: "toolu_bash" }]),
  FakeAnthropic.textReply("done")
]

describe("command hooks from settings files", () => {
  it("a PreToolUse hook that exits 2 blocks the Bash call; its stderr reaches the model as the error result", async () => {
    const dir = workdir()
    settings(dir, {
      PreToolUse: [{ matcher: "Bash", hooks: [command("echo 'no shell today, says policy' >&2; exit 2")] }]
    })
    const server = await fake(bashThenDone("echo hi > ran.txt"))
    const { code, stdout } = await keelP(dir, server)
    assert.strictEqual(code, 0)
    assert.isFalse(fs.existsSync(path.join(dir, "ran.txt")))
    const [result] = toolResults(server, 1)
    assert.isTrue(result.is_error)
    assert.include(textOf(result.content), "no shell today, says policy")
    assert.include(textOf(result.content), "PreToolUse hook denied")
    const final = lines(stdout).find((m) => m.type === "result")
    assert.deepStrictEqual(final.permission_denials.map((d: any) => d.tool_use_id), ["toolu_bash"])
  }, TIMEOUT)

  it("a PreToolUse hook's updatedInput replaces the call's input", async () => {
    const dir = workdir()
    const rewrite = JSON.stringify({
      hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { command: "echo rewritten > rewritten.txt" } }
    })
    settings(dir, { PreToolUse: [{ matcher: "Edit|Bash", hooks: [command(`echo '${rewrite}'`)] }] })
    const server = await fake(bashThenDone("echo original > original.txt"))
    const { code } = await keelP(dir, server)
    assert.strictEqual(code, 0)
    assert.isFalse(fs.existsSync(path.join(dir, "original.txt")))
    assert.strictEqual(fs.readFileSync(path.join(dir, "rewritten.txt"), "utf8"), "rewritten\n")
    assert.isNotTrue(toolResults(server, 1)[0].is_error)
  }, TIMEOUT)

  it("each hook gets Claude Code's input on stdin: session, transcript, cwd, mode, event and the tool call", async () => {
    const dir = workdir()
    const dump = path.join(dir, "inputs.jsonl")
    settings(dir, {
      PreToolUse: [{ hooks: [command(`cat >> ${dump}; echo >> ${dump}`)] }],
      PostToolUse: [{ matcher: "*", hooks: [command(`cat >> ${dump}; echo >> ${dump}`)] }]
    })
    const server = await fake(bashThenDone("echo hi"))
    const { code, stdout } = await keelP(dir, server)
    assert.strictEqual(code, 0)
    const [pre, post] = fs.readFileSync(dump, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    const init = lines(stdout).find((m) => m.type === "system" && m.subtype === "init")
    assert.deepStrictEqual(pre, {
      session_id: init.session_id,
      transcript_path: pre.transcript_path,
      cwd: fs.realpathSync(dir),
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo hi" },
      tool_use_id: "toolu_bash"
    })
    assert.isTrue(pre.transcript_path.endsWith(`${init.session_id}.jsonl`))
    assert.isTrue(fs.existsSync(pre.transcript_path))
    assert.strictEqual(post.hook_event_name, "PostToolUse")
    assert.strictEqual(post.tool_response, "hi")
    assert.isNumber(post.duration_ms)
  }, TIMEOUT)

  it("a UserPromptSubmit hook's stdout reaches the model with the prompt", async () => {
    const dir = workdir()
    settings(dir, { UserPromptSubmit: [{ hooks: [command("echo 'the build is red since Tuesday'")] }] })
    const server = await fake([FakeAnthropic.textReply("noted")])
    const { code } = await keelP(dir, server)
    assert.strictEqual(code, 0)
    const user = server.requests[0]!.body.messages[0]
    const text = textOf(user.content)
    assert.include(text, "go")
    assert.include(text, "the build is red since Tuesday")
  }, TIMEOUT)

  it("a UserPromptSubmit hook that blocks: nothing reaches the model, the reason is the error result", async () => {
    const dir = workdir()
    settings(dir, { UserPromptSubmit: [{ hooks: [command(`echo '{"decision":"block","reason":"no prompts after 6 pm"}'`)] }] })
    const server = await fake([FakeAnthropic.textReply("should not be asked")])
    const { code, stdout } = await keelP(dir, server)
    assert.strictEqual(code, 1)
    assert.strictEqual(server.requests.length, 0)
    const result = lines(stdout).find((m) => m.type === "result")
    assert.isTrue(result.is_error)
    assert.strictEqual(result.terminal_reason, "hook_stopped")
    assert.include(result.result, "no prompts after 6 pm")
  }, TIMEOUT)

  it("a Stop hook that blocks once makes the turn go on with its reason; stop_hook_active on the re-entry", async () => {
    const dir = workdir()
    const seen = path.join(dir, "stops.jsonl")
    const stop = script(dir, "stop.sh", [
      `input=$(cat); echo "$input" >> ${seen}`,
      `if echo "$input" | grep -q '"stop_hook_active":false'; then`,
      `  echo '{"decision":"block","reason":"run the tests before you stop"}'`,
      `fi`
    ].join("\n"))
    settings(dir, { Stop: [{ hooks: [command(stop)] }] })
    const server = await fake([FakeAnthropic.textReply("first answer"), FakeAnthropic.textReply("tests ran, all green")])
    const { code, stdout } = await keelP(dir, server)
    assert.strictEqual(code, 0)
    assert.strictEqual(server.requests.length, 2)
    const last = server.requests[1]!.body.messages.at(-1)
    assert.include(textOf(last.content), "run the tests before you stop")
    const result = lines(stdout).find((m) => m.type === "result")
    assert.strictEqual(result.result, "tests ran, all green")
    const inputs = fs.readFileSync(seen, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    assert.deepStrictEqual(inputs.map((i) => [i.stop_hook_active, i.last_assistant_message]), [
      [false, "first answer"],
      [true, "tests ran, all green"]
    ])
  }, TIMEOUT)

  it("a hook that outlives its timeout is stopped and reported; the turn goes on", async () => {
    const dir = workdir()
    settings(dir, { PreToolUse: [{ matcher: "Bash", hooks: [command("sleep 30", 1)] }] })
    const server = await fake(bashThenDone("echo ran > ran.txt"))
    const started = Date.now()
    const { code, stderr } = await keelP(dir, server)
    assert.strictEqual(code, 0)
    assert.isBelow(Date.now() - started, 20_000)
    assert.strictEqual(fs.readFileSync(path.join(dir, "ran.txt"), "utf8"), "ran\n")
    assert.include(stderr, "timed out after 1s")
  }, TIMEOUT)

  it("--include-hook-events prints system/hook_started and system/hook_response for each hook run", async () => {
    const dir = workdir()
    settings(dir, { PreToolUse: [{ matcher: "Bash", hooks: [command("echo checked; echo warn >&2")] }] })
    const server = await fake(bashThenDone("echo hi"))
    const { code, stdout } = await keelP(dir, server, ["--include-hook-events"])
    assert.strictEqual(code, 0)
    const messages = lines(stdout)
    const started = messages.find((m) => m.subtype === "hook_started")
    const response = messages.find((m) => m.subtype === "hook_response")
    assert.deepInclude(started, { type: "system", hook_name: "PreToolUse:Bash", hook_event: "PreToolUse" })
    assert.deepInclude(response, {
      hook_id: started.hook_id,
      hook_name: "PreToolUse:Bash",
      stdout: "checked\n",
      stderr: "warn\n",
      output: "checked\nwarn\n",
      exit_code: 0,
      outcome: "success"
    })
    assert.isString(response.session_id)
  }, TIMEOUT)

  it("settings with hooks Keel cannot run stop the run with exit 2, naming the file and the keys", async () => {
    const dir = workdir()
    settings(dir, {
      PostToolUseFailure: [{ hooks: [command("true")] }],
      PreToolUse: [{ matcher: "Bash(", hooks: [{ type: "prompt", prompt: "is this ok?" }] }]
    })
    const server = await fake([FakeAnthropic.textReply("never")])
    const { code, stderr } = await keelP(dir, server)
    assert.strictEqual(code, 2)
    assert.strictEqual(server.requests.length, 0)
    assert.include(stderr, path.join(".claude", "settings.json"))
    assert.include(stderr, "hooks.PostToolUseFailure: Keel does not fire PostToolUseFailure hooks yet")
    assert.include(stderr, "hooks.PreToolUse[0].matcher")
    assert.include(stderr, `hooks.PreToolUse[0].hooks[0].type "prompt"`)
  }, TIMEOUT)

  it("--include-hook-events without stream-json output is refused (exit 2)", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("never")])
    const { code, stderr } = await run(["-p", "go", "--include-hook-events"], { cwd: dir, env: envFor(server) })
    assert.strictEqual(code, 2)
    assert.include(stderr, "--include-hook-events needs --output-format stream-json")
  }, TIMEOUT)
})
