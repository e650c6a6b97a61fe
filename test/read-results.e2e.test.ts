/**
 * End to end, the real `keel` binary against the loopback fake of the Messages API:
 *
 * - Read is outside the generic tool result budget: a 60 KB file reaches the model whole in the
 *   next request (before, any result over 50,000 characters became a 2 KB preview), and a 5 MB file
 *   read without a range gets a clear error naming the offset and limit to read instead.
 * - stream-json `user` messages carrying tool results carry `tool_use_result`, the call's structured
 *   result in Claude Code's shape (checked against the Agent SDK's `sdk-tools.d.ts`), and the
 *   transcript keeps it.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"
import * as SdkConformance from "./support/SdkConformance.js"

afterEach(() => closeServers())

/** `n` numbered lines of `width` x's after the number. */
const numbered = (n: number, width: number) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1} ${"x".repeat(width)}`).join("\n") + "\n"

/** The tool_result for `id` in a request body's messages. */
const resultIn = (body: any, id: string): any => {
  for (const m of body.messages) {
    if (Array.isArray(m.content)) for (const b of m.content) if (b.type === "tool_result" && b.tool_use_id === id) return b
  }
  return undefined
}

/** `keel -p` in `dir` with stream-json output, Bash allowed, against a fake playing `script`. */
const runIn = async (dir: string, script: ReadonlyArray<FakeAnthropic.ScriptItem>) => {
  const server = await fake(script)
  const home = path.join(dir, ".keel-home")
  const r = await run(["-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"], {
    env: { ...envFor(server), KEEL_HOME: home },
    cwd: dir
  })
  assert.strictEqual(r.code, 0, r.stderr)
  return { server, home, messages: lines(r.stdout) }
}

describe("Read outside the generic result budget", () => {
  it("a 60 KB file reaches the model whole, in the next request", async () => {
    const dir = workdir()
    const text = numbered(1_500, 30)
    fs.writeFileSync(path.join(dir, "sixty.txt"), text)
    assert.isAbove(text.length, 60_000)
    const { server } = await runIn(dir, [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "sixty.txt" }, id: "toolu_read" }]),
      FakeAnthropic.textReply("Done.")
    ])
    const next = server.requests[1]!.body
    const read = resultIn(next, "toolu_read")
    const expected = text.trimEnd().split("\n").map((l, i) => `${String(i + 1).padStart(6, " ")}\t${l}`).join("\n")
    assert.strictEqual(read.content, expected)
    assert.notProperty(read, "toolUseResult")
  }, 60_000)

  it("a 5 MB file read without a range gets a clear error naming the offset and limit to read", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, "five.txt"), numbered(100_000, 40))
    const { messages, server } = await runIn(dir, [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "five.txt" }, id: "toolu_big" }]),
      FakeAnthropic.textReply("Done.")
    ])
    const result = resultIn(server.requests[1]!.body, "toolu_big")
    assert.isTrue(result.is_error)
    assert.match(result.content, /is too large to read at once: \d+ bytes, 100000 lines, about \d+ tokens/)
    assert.include(result.content, "read lines 1-1500 first (offset 1, limit 1500)")
    const user = messages.find((m) => m.type === "user" && m.message.content[0]?.tool_use_id === "toolu_big")
    assert.match(user.tool_use_result, /^Error: .*five\.txt is too large to read at once/)
  }, 60_000)
})

describe("tool_use_result on stream-json user messages", () => {
  it("after Read and Bash calls: each result its own user message with the structured result; all typecheck; the transcript keeps them", async () => {
    const dir = workdir()
    const { home, messages } = await runIn(dir, [
      FakeAnthropic.toolUseReply([
        { name: "Read", input: { file_path: "README.md", offset: 3, limit: 1 }, id: "toolu_read" },
        { name: "Bash", input: { command: "echo out; echo err >&2" }, id: "toolu_bash" }
      ]),
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo failing; exit 3" }, id: "toolu_fail" }]),
      FakeAnthropic.textReply("Done.")
    ])
    const users = messages.filter((m) => m.type === "user")
    const byId = new Map(users.map((m) => [m.message.content[0].tool_use_id, m]))
    assert.deepStrictEqual(users.map((m) => m.message.content.length), [1, 1, 1])
    assert.deepStrictEqual(byId.get("toolu_read").tool_use_result, {
      type: "text",
      file: { filePath: path.join(dir, "README.md"), content: "It counts sheep.", numLines: 1, startLine: 3, totalLines: 4 }
    })
    assert.deepStrictEqual(byId.get("toolu_bash").tool_use_result, {
      stdout: "out",
      stderr: "err",
      interrupted: false,
      isImage: false,
      noOutputExpected: false
    })
    assert.strictEqual(byId.get("toolu_fail").tool_use_result, "Error: Exit code 3\nfailing")
    const problems = SdkConformance.check(messages)
    assert.deepStrictEqual(problems, [], problems.join("\n"))
    // The transcript keeps each structured result with its tool result.
    const projects = path.join(home, "projects")
    const [slug] = fs.readdirSync(projects)
    const [file] = fs.readdirSync(path.join(projects, slug!)).filter((f) => f.endsWith(".jsonl"))
    const entries = fs.readFileSync(path.join(projects, slug!, file!), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    const kept = entries.flatMap((e) => e.type === "user" && Array.isArray(e.message.content) ? e.message.content : [])
      .filter((b: any) => b.type === "tool_result")
      .map((b: any) => [b.tool_use_id, b.toolUseResult?.stdout ?? b.toolUseResult?.file?.startLine ?? b.toolUseResult])
    assert.deepStrictEqual(kept, [["toolu_read", 3], ["toolu_bash", "out"], ["toolu_fail", "Error: Exit code 3\nfailing"]])
  }, 60_000)
})
