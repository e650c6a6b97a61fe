/**
 * The regression corpus: every recorded session in `test/recordings/` (made by
 * `test/recordings/record.ts` with `keel -p --record` against the loopback fake API) replays with
 * `keel replay`, no API reachable: a change to what the kernel sends fails here with the call, the
 * JSON path of the first differing field and a diff. To accept an intended change, re-record
 * (`npm run build && npx tsx test/recordings/record.ts [name]`) and commit the journals' diff.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { cases } from "./recordings/cases.js"
import { run, workdir } from "./support/KeelProcess.js"

const folder = path.join(import.meta.dirname, "recordings")
const journals = fs.readdirSync(folder).filter((f) => f.endsWith(".journal")).sort()

describe("the recorded corpus replays", () => {
  it("holds a journal and a transcript for every case", () => {
    assert.deepStrictEqual(journals, cases.map((c) => `${c.name}.journal`).sort())
    for (const journal of journals) assert.isTrue(fs.existsSync(path.join(folder, journal.replace(/\.journal$/, ".jsonl"))))
  })

  it("every journal replays as recorded (keel replay: pass), with the API unreachable", async () => {
    const dir = workdir()
    const started = performance.now()
    const results = await Promise.all(journals.map((journal) =>
      run(["replay", path.join(folder, journal)], {
        env: { KEEL_HOME: path.join(dir, "home"), ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "" },
        cwd: dir
      })
    ))
    const realMs = Math.round(performance.now() - started)
    results.forEach((r, i) => {
      assert.strictEqual(r.code, 0, `${journals[i]}: ${r.stdout}${r.stderr}`)
      assert.match(r.stdout, /^replay: pass: \d+ model calls? as recorded/, journals[i])
    })
    console.log(`corpus: ${journals.length} recordings replayed in ${realMs} ms real time\n${results.map((r, i) => `  ${journals[i]}: ${r.stdout.trim()}`).join("\n")}`)
  }, 120_000)
})
