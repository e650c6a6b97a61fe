/**
 * End to end: SIGTERM and SIGHUP interrupt a `keel` run as SIGINT does, with the real binary
 * against the loopback fake API: the running Bash call's process group is killed (its `sleep`
 * child is gone), the turn ends with its result line in stream-json, the transcript is left valid
 * (every tool call answered: a resume works), no temporary file or session lock is left, and the
 * process exits 143 (SIGTERM) or 129 (SIGHUP); the REPL does the same.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { SessionStore, Transcript } from "@keel/core"
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, start, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const model = "claude-sonnet-4-6"

const place = () => {
  const dir = fs.realpathSync(workdir())
  return { dir, home: path.join(dir, ".keel-home") }
}
type Place = ReturnType<typeof place>
const folderOf = (at: Place) => path.join(at.home, "projects", SessionStore.slug(at.dir))

const until = async (check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> => {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Files under `dir` (not `.keel-home`) whose name says they are temporary. */
const temporaries = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((f) => !f.startsWith(".keel-home") && /\.tmp$/.test(f))

describe("signals", { timeout: 120_000 }, () => {
  for (const [signal, code] of [["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    it(`${signal} during a long Bash call: its child is killed, a result line, a valid transcript, no lock left, exit ${code}`, async () => {
      const at = place()
      const server = await fake([
        FakeAnthropic.toolUseReply(
          [{ name: "Bash", input: { command: "sleep 30 & echo $! > child.pid; wait" }, id: "toolu_sleep" }],
          { model }
        )
      ])
      const keel = start(
        ["-p", "nap", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
        { env: { ...envFor(server), KEEL_HOME: at.home }, cwd: at.dir }
      )
      const pidFile = path.join(at.dir, "child.pid")
      await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim() !== "", "the Bash child's pid")
      const child = Number(fs.readFileSync(pidFile, "utf8").trim())
      assert.isTrue(alive(child))
      keel.child.kill(signal)
      const done = await keel.done
      assert.strictEqual(done.code, code, done.stderr)
      await until(() => !alive(child), "the Bash child to be gone", 5_000)
      const out = lines(done.stdout)
      const result = out.at(-1)
      assert.strictEqual(result.type, "result")
      assert.strictEqual(result.subtype, "error_during_execution")
      const id = out[0].session_id as string
      assert.deepStrictEqual(fs.readdirSync(folderOf(at)), [`${id}.jsonl`], "no lock file left")
      assert.deepStrictEqual(temporaries(at.dir), [])
      // The transcript replays with every call answered, and resumes.
      const file = path.join(folderOf(at), `${id}.jsonl`)
      const parsed = Transcript.parseEntries(fs.readFileSync(file), { file, sessionId: id })
      if (Either.isLeft(parsed)) return assert.fail(parsed.left.message)
      assert.deepStrictEqual(parsed.right.dropped, [])
      const roles = parsed.right.loaded.messages.map((m) => m.role)
      assert.deepStrictEqual(roles, ["user", "assistant", "user"])
      const next = await fake([FakeAnthropic.textReply("awake", { model })])
      const resumed = await run(["-p", "go on", "--output-format", "stream-json", "--resume", id], {
        env: { ...envFor(next), KEEL_HOME: at.home },
        cwd: at.dir
      })
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      assert.include(JSON.stringify(next.requests[0]!.body.messages[2]), "toolu_sleep")
    })
  }

  it("SIGTERM while the API stalls: the stream stops, the result line is printed, exit 143", async () => {
    const at = place()
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes", { model }), stallAfter: 2 }])
    const keel = start(["-p", "go", "--output-format", "stream-json"], { env: { ...envFor(server), KEEL_HOME: at.home }, cwd: at.dir })
    await until(() => server.requests.length === 1, "the request")
    keel.child.kill("SIGTERM")
    const done = await keel.done
    assert.strictEqual(done.code, 143, done.stderr)
    assert.strictEqual(lines(done.stdout).at(-1).type, "result")
    assert.strictEqual(fs.readdirSync(folderOf(at)).filter((f) => f.endsWith(".lock")).length, 0)
  })

  it("the REPL: SIGTERM mid-turn stops the turn, releases the session, and exits 143", async () => {
    const at = place()
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes", { model }), stallAfter: 2 }])
    const keel = start([], { env: { ...envFor(server), KEEL_HOME: at.home }, cwd: at.dir, openStdin: true })
    keel.child.stdin!.write("hello\n")
    await until(() => server.requests.length === 1, "the request")
    keel.child.kill("SIGTERM")
    const done = await keel.done
    assert.strictEqual(done.code, 143, done.stderr)
    assert.strictEqual(fs.readdirSync(folderOf(at)).filter((f) => f.endsWith(".lock")).length, 0)
  })
})
