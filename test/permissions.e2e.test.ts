/**
 * End to end: permissions of the real `keel` binary against the loopback fake API: rules from the
 * flags and from `.keel/settings.json`, denials reported in the result, and settings that cannot be
 * used.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, runStreamJson, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** A model that reads `file`, then answers with whatever the tool result said. */
const readThenAnswer = (file: string): ReadonlyArray<FakeAnthropic.ScriptItem> => [
  FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: file }, id: "toolu_read" }]),
  FakeAnthropic.textReply("done")
]

const keel = runStreamJson

const toolResultOf = (request: { body: any }) => request.body.messages.at(-1).content[0]

describe("keel permissions", () => {
  it("--disallowedTools Read: the call is denied, the model is told why, and the result lists the denial", async () => {
    const dir = workdir()
    const t = await keel(dir, readThenAnswer("README.md"), ["--disallowedTools", "Read"])
    assert.strictEqual(t.code, 0)
    const result = t.messages.at(-1)
    assert.deepStrictEqual(result.permission_denials, [
      { tool_name: "Read", tool_use_id: "toolu_read", tool_input: { file_path: "README.md" } }
    ])
    const denied = toolResultOf(t.server.requests[1]!)
    assert.isTrue(denied.is_error)
    assert.include(denied.content, "Permission to use Read was denied: the rule Read denies it")
  })

  it("a deny rule in .keel/settings.json covers its path pattern only; init reports the mode from the settings", async () => {
    const dir = workdir()
    fs.mkdirSync(path.join(dir, ".keel"))
    fs.writeFileSync(path.join(dir, "secret.env"), "TOKEN=hunter2\n")
    fs.writeFileSync(
      path.join(dir, ".keel", "settings.json"),
      JSON.stringify({ permissions: { deny: ["Read(./*.env)"], defaultMode: "acceptEdits" } })
    )
    const denied = await keel(dir, readThenAnswer("secret.env"), [])
    assert.strictEqual(denied.messages[0].permissionMode, "acceptEdits")
    assert.strictEqual(denied.messages.at(-1).permission_denials.length, 1)
    assert.notInclude(JSON.stringify(denied.server.requests[1]!.body), "hunter2")

    const allowed = await keel(dir, readThenAnswer("README.md"), ["--permission-mode", "plan"])
    assert.strictEqual(allowed.messages[0].permissionMode, "plan")
    assert.deepStrictEqual(allowed.messages.at(-1).permission_denials, [])
    assert.include(toolResultOf(allowed.server.requests[1]!).content, "It counts sheep.")
  })

  it("settings that are not valid JSON, or rules that do not parse, stop keel with exit code 2 naming the problem", async () => {
    const dir = workdir()
    fs.mkdirSync(path.join(dir, ".keel"))
    const file = path.join(dir, ".keel", "settings.local.json")
    fs.writeFileSync(file, "{ \"permissions\": { \"allow\": [\"Read\", }")
    const broken = await keel(dir, readThenAnswer("README.md"), [])
    assert.strictEqual(broken.code, 2)
    // Named as it sits in the project, relative to the working directory.
    assert.match(broken.stderr, /^keel: \.keel\/settings\.local\.json is not valid JSON \(/)
    assert.strictEqual(broken.server.requests.length, 0)

    fs.writeFileSync(file, JSON.stringify({ permissions: { defaultMode: "yolo" } }))
    const mode = await keel(dir, readThenAnswer("README.md"), [])
    assert.strictEqual(mode.code, 2)
    assert.include(mode.stderr, ".keel/settings.local.json: permissions.defaultMode must be one of default, acceptEdits")

    fs.rmSync(file)
    const rule = await keel(dir, readThenAnswer("README.md"), ["--allowedTools", "Bash(npm"])
    assert.strictEqual(rule.code, 2)
    assert.include(rule.stderr, "not a permission rule: \"Bash(npm\"")
  })

  it("--tools offers only the tools named; a call to another gets an error naming the available ones", async () => {
    const dir = workdir()
    const t = await keel(dir, [
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "ls" }, id: "toolu_bash" }]),
      FakeAnthropic.textReply("done")
    ], ["--tools", "Read,Grep"])
    assert.deepStrictEqual(t.messages[0].tools, ["Read", "Grep"])
    assert.deepStrictEqual(t.server.requests[0]!.body.tools.map((tool: any) => tool.name), ["Read", "Grep"])
    assert.include(toolResultOf(t.server.requests[1]!).content, "No such tool available: Bash. The available tools are: Read, Grep.")
  })

  it("a file outside the working directory needs --add-dir (or a rule); the denial says why", async () => {
    const dir = workdir()
    const other = workdir()
    const outside = path.join(other, "README.md")
    const denied = await keel(dir, readThenAnswer(outside), [])
    assert.strictEqual(denied.messages.at(-1).permission_denials.length, 1)
    assert.include(toolResultOf(denied.server.requests[1]!).content, "outside the working directory")
    const added = await keel(dir, readThenAnswer(outside), ["--add-dir", other])
    assert.deepStrictEqual(added.messages.at(-1).permission_denials, [])
    assert.include(toolResultOf(added.server.requests[1]!).content, "It counts sheep.")
  })

  it("--dangerously-skip-permissions with another --permission-mode is a usage error", async () => {
    const dir = workdir()
    const r = await keel(dir, [], ["--dangerously-skip-permissions", "--permission-mode", "plan"])
    assert.strictEqual(r.code, 2)
    assert.include(r.stderr, "contradict each other")
  })
})

describe("keel edits files", () => {
  it("a scripted model edits a file through Read → Edit (acceptEdits); an Edit without the mode is denied and listed", async () => {
    const dir = workdir()
    const script = (): ReadonlyArray<FakeAnthropic.ScriptItem> => [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_read" }]),
      FakeAnthropic.toolUseReply([{
        name: "Edit",
        input: { file_path: "README.md", old_string: "It counts sheep.", new_string: "It counts goats." },
        id: "toolu_edit"
      }]),
      FakeAnthropic.textReply("Edited.")
    ]
    const denied = await keel(dir, script(), [])
    assert.deepStrictEqual(denied.messages.at(-1).permission_denials.map((d: any) => [d.tool_name, d.tool_use_id]), [["Edit", "toolu_edit"]])
    assert.include(fs.readFileSync(path.join(dir, "README.md"), "utf8"), "It counts sheep.")

    const edited = await keel(dir, script(), ["--permission-mode", "acceptEdits"])
    assert.strictEqual(edited.code, 0)
    assert.deepStrictEqual(edited.messages.at(-1).permission_denials, [])
    assert.include(toolResultOf(edited.server.requests[2]!).content, "has been updated")
    assert.strictEqual(fs.readFileSync(path.join(dir, "README.md"), "utf8"), "# Demo project\n\nIt counts goats.\nThree lines.\n")
  })
})

describe("keel runs shell commands under the rules", () => {
  it("a Bash call no rule allows is denied and listed; one an allow rule covers runs; a smuggled one is denied", async () => {
    const dir = workdir()
    const script: ReadonlyArray<FakeAnthropic.ScriptItem> = [
      FakeAnthropic.toolUseReply([
        { name: "Bash", input: { command: "echo hello from bash" }, id: "toolu_echo" },
        { name: "Bash", input: { command: "echo ok; touch smuggled.txt" }, id: "toolu_smuggle" },
        { name: "Bash", input: { command: "rm -rf build" }, id: "toolu_rm" }
      ]),
      FakeAnthropic.textReply("done")
    ]
    const t = await keel(dir, script, ["--allowedTools", "Bash(echo:*)"])
    assert.strictEqual(t.code, 0)
    assert.deepStrictEqual(t.messages.at(-1).permission_denials.map((d: any) => d.tool_use_id), ["toolu_smuggle", "toolu_rm"])
    const results = t.server.requests[1]!.body.messages.at(-1).content
    assert.deepStrictEqual(results.map((r: any) => [r.tool_use_id, r.is_error === true]), [
      ["toolu_echo", false],
      ["toolu_smuggle", true],
      ["toolu_rm", true]
    ])
    assert.strictEqual(results[0].content, "hello from bash")
    assert.deepStrictEqual(
      t.messages.filter((m: any) => m.subtype === "permission_denied").map((m: any) => m.tool_use_id),
      ["toolu_smuggle", "toolu_rm"]
    )
    assert.isFalse(fs.existsSync(path.join(dir, "smuggled.txt")))
  })
})
