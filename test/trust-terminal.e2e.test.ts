/**
 * End to end: the trust question in a real terminal (the real `keel` REPL in a pseudo-terminal): one key
 * answers. Esc leaves before the session starts; y goes on to the prompt and is remembered.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, workdir } from "./support/KeelProcess.js"
import * as Terminal from "./support/Terminal.js"

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

const QUESTION = "Do you trust the files in this folder?"

const untrusted = async () => {
  const server = await fake([FakeAnthropic.textReply("hello there")])
  const dir = fs.realpathSync(workdir())
  const home = path.join(dir, ".keel-home")
  const term = Terminal.open({ cwd: dir, env: { ...envFor(server), KEEL_HOME: home }, trust: false })
  await term.waitFor(QUESTION)
  return { server, dir, home, term }
}

describe("keel trust question in a terminal", () => {
  it("Esc exits 1 without starting the session", async () => {
    const { home, server, term } = await untrusted()
    term.send("Escape")
    const screen = await term.waitFor("[keel exited 1]")
    assert.include(screen, "Not trusted")
    assert.notInclude(screen, "Resume this session")
    assert.strictEqual(server.requests.length, 0)
    assert.isFalse(fs.existsSync(path.join(home, "trusted-folders.json")))
  })

  it("y goes on to the prompt and is remembered", async () => {
    const { dir, home, term } = await untrusted()
    term.type("y")
    await term.waitFor("› ")
    term.type("hi")
    term.send("Enter")
    await term.waitFor("hello there")
    assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(home, "trusted-folders.json"), "utf8")).folders, [dir])
  })
})
