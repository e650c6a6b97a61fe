/**
 * End to end: custom slash commands from Markdown files with the real `keel` binary against the
 * loopback fake API, headless and in the REPL (a real terminal): the prompt the model receives, the
 * turn's model, how `/help`, Tab completion and `system/init` list them, and a broken file.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"
import * as Terminal from "./support/Terminal.js"

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

const REVIEW = [
  "---",
  "description: Review a file with care",
  "argument-hint: [file] [focus]",
  "model: haiku",
  "---",
  "Please review $0 with great care, focusing on $1.",
  "All arguments: $ARGUMENTS"
].join("\n")

/** A project with `.keel/commands/review.md` and a user command in `$KEEL_HOME/commands/notes/today.md`. */
const project = () => {
  const dir = workdir()
  const home = path.join(dir, ".keel-home")
  fs.mkdirSync(path.join(dir, ".keel", "commands"), { recursive: true })
  fs.writeFileSync(path.join(dir, ".keel", "commands", "review.md"), REVIEW)
  fs.writeFileSync(path.join(dir, ".keel", "commands", "broken.md"), "---\ndescription: [unclosed\n---\nbody\n")
  fs.mkdirSync(path.join(home, "commands", "notes"), { recursive: true })
  fs.writeFileSync(path.join(home, "commands", "notes", "today.md"), "Summarise what changed today.")
  return { dir, home }
}

const texts = (message: any): Array<string> => message.content.map((b: any) => b.text)

describe("custom slash commands", () => {
  it("keel -p \"/review src/a.ts bugs\": the model gets the tags and the substituted body, on the command's model", async () => {
    const { dir, home } = project()
    const server = await fake([FakeAnthropic.textReply("Looks fine.", { model: "claude-haiku-4-5" })])
    const r = await run(["-p", "/review src/a.ts bugs", "--output-format", "stream-json"], {
      env: { ...envFor(server), KEEL_HOME: home },
      cwd: dir
    })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(server.requests.length, 1)
    const body = server.requests[0]!.body
    assert.strictEqual(body.model, "claude-haiku-4-5")
    assert.deepStrictEqual(texts(body.messages[0]), [
      "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>src/a.ts bugs</command-args>\n",
      "Please review src/a.ts with great care, focusing on bugs.\nAll arguments: src/a.ts bugs"
    ])
    const messages = lines(r.stdout)
    assert.includeMembers(messages[0].slash_commands, ["compact", "help", "review", "broken", "notes:today"])
    assert.strictEqual(messages.at(-1).result, "Looks fine.")
  })

  it("a user's command from $KEEL_HOME/commands, namespaced by its folder; without placeholders the arguments are appended", async () => {
    const { dir, home } = project()
    const server = await fake([FakeAnthropic.textReply("Done.")])
    const r = await run(["-p", "/notes:today in short"], { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(r.stdout, "Done.\n")
    assert.deepStrictEqual(texts(server.requests[0]!.body.messages[0])[1], "Summarise what changed today.\n\nARGUMENTS: in short")
    // The turn's model was the command's only: the session's own model is back for the next turn.
    assert.notStrictEqual(server.requests[0]!.body.model, "claude-haiku-4-5")
  })

  it("/help lists the custom commands with their descriptions; a broken file answers what is wrong and sends nothing", async () => {
    const { dir, home } = project()
    const server = await fake([])
    const help = await run(["-p", "/help"], { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir })
    assert.strictEqual(help.code, 0)
    assert.match(help.stdout, /\/review \[file\] \[focus\]\s+Review a file with care/)
    assert.match(help.stdout, /\/notes:today\s+Summarise what changed today\./)
    const broken = await run(["-p", "/broken"], { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir })
    assert.strictEqual(broken.code, 1)
    assert.include(broken.stderr, `${path.join(fs.realpathSync(dir), ".keel", "commands", "broken.md")}`)
    assert.include(broken.stderr, "not valid YAML")
    assert.strictEqual(server.requests.length, 0)
  })

  it("in the REPL: Tab completes /review, and running it sends the expanded prompt", async () => {
    const { dir, home } = project()
    const server = await fake([FakeAnthropic.textReply("Reviewed **carefully**.", { model: "claude-haiku-4-5" })])
    const term = Terminal.open({ cwd: dir, env: { ...envFor(server), KEEL_HOME: home } })
    await term.waitFor("› ")
    term.type("/rev")
    term.send("Tab")
    await term.waitFor("› /review ")
    term.type("README.md style")
    term.send("Enter")
    const screen = await term.waitFor("context left")
    assert.include(screen, "Reviewed carefully.")
    assert.strictEqual(server.requests.length, 1)
    assert.deepStrictEqual(texts(server.requests[0]!.body.messages[0])[1], "Please review README.md with great care, focusing on style.\nAll arguments: README.md style")
  })
})
