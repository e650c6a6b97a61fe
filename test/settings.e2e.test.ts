/**
 * End to end: Claude Code's settings carry over. The built `keel` binary (`-p`, and under the real
 * Claude Agent SDK's `query()`) and Keel's own in-process `query()` read `.claude/settings.json` and
 * the other sources, against the loopback fake Messages API: permission rules, `env` (seen by a Bash
 * call), `model` (in the request body), `--setting-sources`, `--settings`, `apiKeyHelper` (its key
 * sent, re-run after a 401), invalid values (exit 2 naming file and key), and
 * `--allow-dangerously-skip-permissions` (bypassPermissions available to `setPermissionMode`).
 */
import { query as sdkQuery } from "@anthropic-ai/claude-agent-sdk"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Query, query } from "@keel/cli"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

/** Writes `content` (JSON unless a string) at `file` under `dir`, folders included. */
const write = (dir: string, file: string, content: unknown) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
  fs.writeFileSync(path.join(dir, file), typeof content === "string" ? content : JSON.stringify(content))
}

/** A fresh folder for Claude Code's user settings (`CLAUDE_CONFIG_DIR`), holding `settings`. */
const claudeHome = (settings?: unknown): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-claude-home-"))
  if (settings !== undefined) write(dir, "settings.json", settings)
  return dir
}

/** The tool_result blocks of request `n`'s last message, by tool_use id. */
const toolResults = (server: FakeAnthropic.FakeAnthropic, n: number): Record<string, { content: unknown; is_error?: boolean }> =>
  Object.fromEntries(
    (server.requests[n]!.body.messages.at(-1).content as Array<any>)
      .filter((b) => b.type === "tool_result")
      .map((b) => [b.tool_use_id, b])
  )

const text = (content: unknown): string =>
  typeof content === "string" ? content : (content as Array<{ text: string }>).map((b) => b.text).join("\n")

/** `keel -p go --output-format stream-json args` in `dir` against a fake playing `script`. */
const keelRun = async (
  dir: string,
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  args: ReadonlyArray<string> = [],
  env: Record<string, string> = {}
) => {
  const server = await fake(script)
  const r = await run(["-p", "go", "--output-format", "stream-json", "--verbose", ...args], {
    cwd: dir,
    env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), ...env }
  })
  return { ...r, server, messages: r.code === 0 || r.code === 1 ? lines(r.stdout) : [] }
}

describe("keel -p with Claude Code's settings", () => {
  it("a project with only .claude/settings.json: its deny rule stops a Write, its env reaches a Bash call (over the shell's)", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", {
      permissions: { allow: ["Bash(echo:*)"], deny: ["Write"] },
      env: { KEEL_E2E_GREETING: "hello from .claude/settings.json" },
      hooks: {},
      includeCoAuthoredBy: false
    })
    const { code, messages, server } = await keelRun(dir, [
      FakeAnthropic.toolUseReply([
        { name: "Bash", input: { command: "echo \"$KEEL_E2E_GREETING\"" }, id: "toolu_bash" },
        { name: "Write", input: { file_path: "out.txt", content: "x" }, id: "toolu_write" }
      ]),
      FakeAnthropic.textReply("done")
    ], [], { KEEL_E2E_GREETING: "from the shell" })
    assert.strictEqual(code, 0)
    const results = toolResults(server, 1)
    assert.strictEqual(text(results.toolu_bash!.content), "hello from .claude/settings.json")
    assert.isTrue(results.toolu_write!.is_error)
    assert.include(text(results.toolu_write!.content), "the rule Write denies it")
    assert.isFalse(fs.existsSync(path.join(dir, "out.txt")))
    assert.deepStrictEqual(messages.at(-1).permission_denials.map((d: any) => d.tool_use_id), ["toolu_write"])
  }, TIMEOUT)

  it("model: the settings' model reaches the request body; ANTHROPIC_MODEL comes before it, --model before both", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", { model: "claude-from-claude-settings" })
    write(dir, ".keel/settings.local.json", { model: "claude-from-keel-local" })
    const settings = await keelRun(dir, [FakeAnthropic.textReply("ok")])
    assert.strictEqual(settings.code, 0)
    assert.strictEqual(settings.server.requests[0]!.body.model, "claude-from-keel-local")
    assert.strictEqual(settings.messages[0].model, "claude-from-keel-local")
    const env = await keelRun(dir, [FakeAnthropic.textReply("ok")], [], { ANTHROPIC_MODEL: "claude-from-env" })
    assert.strictEqual(env.server.requests[0]!.body.model, "claude-from-env")
    const flag = await keelRun(dir, [FakeAnthropic.textReply("ok")], ["--model", "claude-from-flag"], { ANTHROPIC_MODEL: "claude-from-env" })
    assert.strictEqual(flag.server.requests[0]!.body.model, "claude-from-flag")
  }, TIMEOUT)

  it("--setting-sources project skips the user's file; by default it is read", async () => {
    const dir = workdir()
    const home = claudeHome({ model: "claude-user-model", env: { KEEL_E2E_WHO: "user" } })
    write(dir, ".claude/settings.json", { permissions: { allow: ["Bash(echo:*)"] } })
    const script = () => [
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo \"who=$KEEL_E2E_WHO\"" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("done")
    ]
    const all = await keelRun(dir, script(), [], { CLAUDE_CONFIG_DIR: home })
    assert.strictEqual(all.server.requests[0]!.body.model, "claude-user-model")
    assert.strictEqual(text(toolResults(all.server, 1).toolu_1!.content), "who=user")
    const project = await keelRun(dir, script(), ["--setting-sources", "project"], { CLAUDE_CONFIG_DIR: home })
    assert.strictEqual(project.code, 0)
    assert.strictEqual(project.server.requests[0]!.body.model, "claude-sonnet-4-6")
    assert.strictEqual(text(toolResults(project.server, 1).toolu_1!.content), "who=")
    // Without the project source its allow rule is gone too: the Bash call is denied.
    const none = await keelRun(dir, script(), ["--setting-sources", ""], { CLAUDE_CONFIG_DIR: home })
    assert.isTrue(toolResults(none.server, 1).toolu_1!.is_error)
  }, TIMEOUT)

  it("--settings '{...}' comes after the files: its model and env win", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", { model: "claude-project", permissions: { allow: ["Bash(echo:*)"] }, env: { A: "project", B: "project" } })
    const { code, server } = await keelRun(dir, [
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo \"$A $B\"" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("done")
    ], ["--settings", JSON.stringify({ model: "claude-flag", env: { B: "flag" } })])
    assert.strictEqual(code, 0)
    assert.strictEqual(server.requests[0]!.body.model, "claude-flag")
    assert.strictEqual(text(toolResults(server, 1).toolu_1!.content), "project flag")
  }, TIMEOUT)

  it("an invalid value stops the run with exit 2, naming the file and the key; nothing is sent", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", { env: { PORT: 3000 } })
    const invalid = await keelRun(dir, [FakeAnthropic.textReply("never")])
    assert.strictEqual(invalid.code, 2)
    assert.strictEqual(invalid.stderr, "keel: .claude/settings.json: env.PORT must be a string\n")
    assert.strictEqual(invalid.stdout, "")
    assert.strictEqual(invalid.server.requests.length, 0)
    write(dir, ".claude/settings.json", "{ \"model\": ")
    const notJson = await keelRun(dir, [FakeAnthropic.textReply("never")])
    assert.strictEqual(notJson.code, 2)
    assert.match(notJson.stderr, /^keel: \.claude\/settings\.json is not valid JSON \(.+\); fix it or remove it\.\n$/)
    const flag = await keelRun(workdir(), [FakeAnthropic.textReply("never")], ["--settings", "{\"permissions\": {\"allow\": \"Bash\"}}"])
    assert.strictEqual(flag.code, 2)
    assert.strictEqual(flag.stderr, "keel: --settings: permissions.allow must be an array of strings\n")
  }, TIMEOUT)

  it("apiKeyHelper supplies the key, and is re-run once after a 401 (the request retried with the new key)", async () => {
    const dir = workdir()
    write(dir, "helper.sh", "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo \"  sk-helper-$n  \"\n")
    fs.chmodSync(path.join(dir, "helper.sh"), 0o755)
    write(dir, ".claude/settings.json", { apiKeyHelper: "./helper.sh" })
    const server = await fake([
      FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key"),
      FakeAnthropic.textReply("authenticated")
    ])
    // No ANTHROPIC_API_KEY: the helper's key is the one sent.
    const r = await run(["-p", "go"], { cwd: dir, env: { ANTHROPIC_BASE_URL: server.url, KEEL_HOME: path.join(dir, ".keel-home") } })
    assert.strictEqual(r.stdout, "authenticated\n", r.stderr)
    assert.strictEqual(r.code, 0)
    // The Anthropic SDK sends an API key as a bearer token.
    assert.deepStrictEqual(server.requests.map((q) => q.headers["authorization"]), ["Bearer sk-helper-1", "Bearer sk-helper-2"])
    assert.strictEqual(fs.readFileSync(path.join(dir, "count"), "utf8").trim(), "2")
  }, TIMEOUT)

  it("a failing apiKeyHelper is an error naming the setting and its file; nothing is sent", async () => {
    const dir = workdir()
    write(dir, ".keel/settings.json", { apiKeyHelper: "echo 'no vault' >&2; exit 7" })
    const server = await fake([FakeAnthropic.textReply("never")])
    const r = await run(["-p", "go"], { cwd: dir, env: { ANTHROPIC_BASE_URL: server.url, KEEL_HOME: path.join(dir, ".keel-home") } })
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      r.stderr,
      "keel: apiKeyHelper (.keel/settings.json) exited with code 7 (stderr: no vault): echo 'no vault' >&2; exit 7. " +
        "Fix the command so it prints the API key on stdout, or set ANTHROPIC_API_KEY.\n"
    )
    assert.strictEqual(server.requests.length, 0)
  }, TIMEOUT)
})

describe("settings under the Claude Agent SDK's query()", () => {
  /** Streaming input: `first`, then (after the host's step between the turns) `second`. */
  const twoTurns = (step: (q: ReturnType<typeof sdkQuery>) => Promise<void>, options: Parameters<typeof sdkQuery>[0]["options"]) => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    async function* input() {
      yield { type: "user" as const, message: { role: "user" as const, content: "first" }, parent_tool_use_id: null }
      await gate
      yield { type: "user" as const, message: { role: "user" as const, content: "second" }, parent_tool_use_id: null }
    }
    const q = sdkQuery({ prompt: input(), options: { pathToClaudeCodeExecutable: keel, ...options } })
    return (async () => {
      const results: Array<any> = []
      for await (const message of q) {
        if (message.type !== "result") continue
        results.push(message)
        if (results.length === 1) {
          await step(q)
          release()
        }
        if (results.length === 2) break
      }
      return results
    })()
  }

  it("allowDangerouslySkipPermissions: setPermissionMode(\"bypassPermissions\") is allowed, and the next Write runs unasked", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.textReply("first"),
      FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: "bypassed.txt", content: "z" }, id: "toolu_w" }]),
      FakeAnthropic.textReply("written")
    ])
    const env = { ...process.env, ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), CLAUDE_CONFIG_DIR: claudeHome() }
    let refusal: string | undefined
    const results = await twoTurns(
      (q) => q.setPermissionMode("bypassPermissions").catch((e: Error) => void (refusal = e.message)),
      { cwd: dir, env, allowDangerouslySkipPermissions: true }
    )
    assert.isUndefined(refusal)
    assert.deepStrictEqual(results.map((r) => r.result), ["first", "written"])
    assert.strictEqual(fs.readFileSync(path.join(dir, "bypassed.txt"), "utf8"), "z")
  }, TIMEOUT)

  it("without it, the switch is refused and the Write is denied", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.textReply("first"),
      FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: "bypassed.txt", content: "z" }, id: "toolu_w" }]),
      FakeAnthropic.textReply("denied")
    ])
    const env = { ...process.env, ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), CLAUDE_CONFIG_DIR: claudeHome() }
    let refusal: string | undefined
    await twoTurns((q) => q.setPermissionMode("bypassPermissions").catch((e: Error) => void (refusal = e.message)), { cwd: dir, env })
    assert.include(refusal, "Switching to permission mode bypassPermissions was refused")
    assert.isFalse(fs.existsSync(path.join(dir, "bypassed.txt")))
  }, TIMEOUT)

  it("settingSources and settings: only the project's file is read, the settings object over it", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", { permissions: { allow: ["Bash(echo:*)"] }, env: { P: "project", F: "project" } })
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo \"$P|$U|$F\"" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("done")
    ])
    const messages: Array<any> = []
    const q = sdkQuery({
      prompt: "go",
      options: {
        pathToClaudeCodeExecutable: keel,
        cwd: dir,
        env: {
          ...process.env,
          ...envFor(server),
          KEEL_HOME: path.join(dir, ".keel-home"),
          CLAUDE_CONFIG_DIR: claudeHome({ env: { U: "user" }, model: "claude-user-model" })
        },
        settingSources: ["project"],
        settings: { env: { F: "flag" }, model: "claude-from-sdk-settings" }
      }
    })
    for await (const message of q) messages.push(message)
    assert.strictEqual(messages.find((m) => m.type === "result").subtype, "success")
    assert.strictEqual(server.requests[0]!.body.model, "claude-from-sdk-settings")
    assert.strictEqual(text(toolResults(server, 1).toolu_1!.content), "project||flag")
  }, TIMEOUT)
})

describe("settings in Keel's own query()", () => {
  it("settingSources and settings (an object) as through the CLI; the settings' env configures the run, never process.env", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", {
      permissions: { allow: ["Bash(echo:*)"] },
      env: { KEEL_Q_P: "project", ANTHROPIC_MODEL: "claude-from-settings-env" }
    })
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo \"$KEEL_Q_P|$KEEL_Q_U|$KEEL_Q_F\"" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("done")
    ])
    const messages: Array<Query.SDKMessage> = []
    for await (
      const m of query({
        prompt: "go",
        options: {
          cwd: dir,
          env: {
            ANTHROPIC_BASE_URL: server.url,
            ANTHROPIC_API_KEY: "test-key",
            KEEL_HOME: path.join(dir, ".keel-home"),
            CLAUDE_CONFIG_DIR: claudeHome({ env: { KEEL_Q_U: "user" } })
          },
          settingSources: ["project"],
          settings: { env: { KEEL_Q_F: "flag" }, model: "claude-from-query-settings" }
        }
      })
    ) messages.push(m)
    assert.strictEqual(messages.find((m) => m.type === "result")?.subtype, "success")
    // The settings' env configures the run: its ANTHROPIC_MODEL comes before the settings' model.
    assert.strictEqual(server.requests[0]!.body.model, "claude-from-settings-env")
    assert.strictEqual(text(toolResults(server, 1).toolu_1!.content), "project||flag")
    assert.isUndefined(process.env.KEEL_Q_P)
    assert.isUndefined(process.env.KEEL_Q_F)
    assert.notStrictEqual(process.env.ANTHROPIC_MODEL, "claude-from-settings-env")
  }, TIMEOUT)

  it("invalid settings reject the query with the message keel prints", async () => {
    const dir = workdir()
    write(dir, ".claude/settings.json", { model: 5 })
    let error: any
    try {
      for await (const _ of query({ prompt: "go", options: { cwd: dir, env: { ANTHROPIC_API_KEY: "k", KEEL_HOME: path.join(dir, ".keel-home") } } })) {
        // nothing comes
      }
    } catch (e) {
      error = e
    }
    assert.strictEqual(error?.message, ".claude/settings.json: model must be a model name (a non-empty string)")
    assert.strictEqual(error?.code, 2)
  }, TIMEOUT)
})
