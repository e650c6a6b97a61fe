/**
 * End to end: `/goal` with the real `keel` binary against the loopback fake of the Messages API.
 * `keel -p "/goal …"` sets the goal and the runtime works on it in continuation turns until the
 * model calls `update_goal`; the goal's changes are in the transcript, and `/goal` on a resumed
 * session shows it.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

describe("keel -p with /goal", () => {
  it("sets the goal, continues it through turns of its own, and stops when the model says done", async () => {
    const dir = workdir()
    const home = path.join(dir, ".keel-home")
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "TodoWrite", input: { todos: [{ content: "Write it", status: "in_progress", activeForm: "Writing it" }] }, id: "toolu_todo" }]),
      FakeAnthropic.textReply("planned"),
      FakeAnthropic.toolUseReply([{ name: "update_goal", input: { status: "done", reason: "the haiku is written" }, id: "toolu_goal" }]),
      FakeAnthropic.textReply("All done.")
    ])
    const r = await run(["-p", "/goal write a haiku", "--output-format", "stream-json", "--verbose"], {
      env: { ...envFor(server), KEEL_HOME: home },
      cwd: dir
    })
    assert.strictEqual(r.code, 0, r.stderr)
    const results = lines(r.stdout).filter((m) => m.type === "result")
    assert.strictEqual(results.length, 3, "the command's reply, then two continuation turns")
    assert.include(results[0].result, "Goal set: write a haiku")
    assert.deepStrictEqual(results.slice(1).map((m) => m.result), ["planned", "All done."])
    assert.strictEqual(server.requests.length, 4)
    const prompt = server.requests[0]!.body.messages[0].content
    assert.include(JSON.stringify(prompt), "Continue working toward the session's goal: write a haiku")

    const sessionId = results[0].session_id
    const again = await fake([])
    const shown = await run(["-p", "/goal", "--resume", sessionId], { env: { ...envFor(again), KEEL_HOME: home }, cwd: dir })
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.include(shown.stdout, "Goal (done: the haiku is written): write a haiku · 2/20 continuation turns")
    assert.strictEqual(again.requests.length, 0, "a finished goal admits no turn on resume")
  }, TIMEOUT)
})
