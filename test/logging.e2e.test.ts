/**
 * End to end: the kernel's logs. Silent by default; with `--debug` each retry is a `keel:` line on
 * stderr (level DEBUG, with its attempt, wait and error), and stdout stays the answer.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const script = () => [FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"), FakeAnthropic.textReply("hello")]

describe("keel logs", () => {
  it("--debug logs each retry on stderr; stream-json on stdout stays parseable", async () => {
    const server = await fake(script())
    const r = await run(["-p", "hi", "--debug", "--output-format", "stream-json"], { env: envFor(server), cwd: workdir() })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.match(r.stderr, /^keel: .*level=DEBUG .*message="retrying a failed model call" .*attempt=1 delayMs=\d+ error=/m)
    assert.strictEqual(lines(r.stdout).at(-1).result, "hello")
  })

  it("without --debug nothing is logged", async () => {
    const server = await fake(script())
    const r = await run(["-p", "hi"], { env: envFor(server), cwd: workdir() })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.notInclude(r.stderr, "level=DEBUG")
    assert.strictEqual(r.stdout, "hello\n")
  })
})
