/**
 * End to end: the REPL's permission question as a step of its own, in a real terminal against the
 * loopback fake API. The call's line comes first, then what the call says it does and exactly what
 * it would do (the command, or the diff), then the question; nothing runs and no timer counts while
 * it waits, and the call's time counts from the answer. `a` says which rules it adds and a later
 * call they cover is not asked; `n` takes a reason that the model is told; Esc denies without one.
 * Denials (the user's and a rule's), tool errors and interrupted calls show once, as text, without
 * the tags the model reads. From a pipe, the answer is a line (`n not today`).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, run, workdir } from "./support/KeelProcess.js"
import { enter, repl } from "./support/Repl.js"
import * as Terminal from "./support/Terminal.js"

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

/** The tool_result blocks of request `index`'s last message. */
const toolResults = (server: FakeAnthropic.FakeAnthropic, index: number): Array<any> =>
  server.requests[index]!.body.messages.at(-1).content.filter((b: any) => b.type === "tool_result")

/** Asserts that `texts` appear on `screen` in this order. */
const inOrder = (screen: string, texts: ReadonlyArray<string>) => {
  const at = texts.map((t) => screen.indexOf(t))
  assert.isFalse(at.includes(-1), `all of ${JSON.stringify(texts)} on screen:\n${screen}`)
  assert.deepStrictEqual([...at].sort((a, b) => a - b), at, `in this order: ${JSON.stringify(texts)}\n${screen}`)
}

/** How many times `text` is on `screen`. */
const count = (screen: string, text: string) => screen.split(text).length - 1

const NO_TAGS = /<\/?[a-z_]+>/

describe("keel REPL permission question", () => {
  it("shows the call's line first, then its description and exact command, and no running timer while it waits", async () => {
    const { dir, term } = await repl([
      FakeAnthropic.toolUseReply([{
        name: "Bash",
        input: { command: "sleep 1 && touch made.txt", description: "Wait a second, then create made.txt" }
      }]),
      FakeAnthropic.textReply("made it")
    ])
    enter(term, "make the file")
    let screen = await term.waitFor("[n] no")
    inOrder(screen, [
      "● Bash(sleep 1 && touch made.txt)",
      "Wait a second, then create made.txt",
      "$ sleep 1 && touch made.txt",
      "? Allow Bash(sleep 1 && touch made.txt)?",
      "[y] yes, once"
    ])
    // The question waits (a running call's progress would show within a second): nothing runs, no time counts.
    const asked = Date.now()
    await new Promise((r) => setTimeout(r, 3000))
    screen = term.screen()
    assert.notMatch(screen, /running…/, "no progress while the question waits")
    assert.isFalse(fs.existsSync(path.join(dir, "made.txt")), "nothing runs before the answer")
    assert.strictEqual(count(screen, "● Bash("), 1)

    // The call's time counts from the answer: it is no more than the time since the answer, which
    // is at least 3 s shorter than the time since the question.
    const answered = Date.now()
    term.type("y")
    screen = await term.waitFor(/⎿ \(Bash completed with no output\) · [\d.]+ s/, 30_000)
    const sinceAnswer = (Date.now() - answered) / 1000
    const shown = Number(/⎿ \(Bash completed with no output\) · ([\d.]+) s/.exec(screen)![1])
    assert.isAtMost(shown, sinceAnswer + 0.2, `the time shown (${shown} s) counts from the answer (${sinceAnswer} s ago)`)
    assert.isBelow(shown, (Date.now() - asked) / 1000 - 2.5, "the wait for the answer is not counted")
    assert.isAtLeast(shown, 1, "the command's own second is counted")
    assert.strictEqual(count(screen, "● Bash("), 1, "the call's line is shown once")
    await term.waitFor("made it")
    assert.isTrue(fs.existsSync(path.join(dir, "made.txt")))
  }, 90_000)

  it("shows the diff of an edit (coloured) and of a long write, cut with a count", async () => {
    const { dir, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "notes.txt" } }]),
      FakeAnthropic.toolUseReply([{
        name: "Edit",
        input: { file_path: "notes.txt", old_string: "second line", new_string: "second line, edited" }
      }]),
      FakeAnthropic.toolUseReply([{
        name: "Write",
        input: { file_path: "long.txt", content: Array.from({ length: 40 }, (_, i) => `row ${i + 1}`).join("\n") + "\n" }
      }]),
      FakeAnthropic.textReply("edited and written")
    ])
    fs.writeFileSync(path.join(dir, "notes.txt"), "first line\nsecond line\nthird line\n")
    enter(term, "edit the notes")
    let screen = await term.waitFor("Allow Edit(notes.txt)?")
    inOrder(screen, ["● Edit(notes.txt)", "@@ -1,3 +1,3 @@", " first line", "-second line", "+second line, edited", " third line", "? Allow Edit(notes.txt)?"])
    const coloured = term.screen({ escapes: true }).split("\n")
    assert.match(coloured.find((l) => l.includes("+second line, edited"))!, /\x1b\[[0-9;]*32m/, "added lines are green")
    assert.match(coloured.find((l) => l.includes("-second line"))!, /\x1b\[[0-9;]*31m/, "removed lines are red")
    term.type("y")
    screen = await term.waitFor("Allow Write(long.txt)?")
    inOrder(screen, ["● Write(long.txt)", "+row 1", "+row 11", "… 29 more lines", "? Allow Write(long.txt)?"])
    assert.notInclude(screen, "+row 12")
    term.type("y")
    await term.waitFor("edited and written")
    assert.strictEqual(fs.readFileSync(path.join(dir, "notes.txt"), "utf8"), "first line\nsecond line, edited\nthird line\n")
  })

  it("'a' shows the rules it adds, and a later call they cover is not asked", async () => {
    const { dir, server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "mkdir -p out && touch out/a" } }]),
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch out/a" } }]),
      FakeAnthropic.textReply("touched twice")
    ])
    enter(term, "touch it")
    let screen = await term.waitFor("Allow Bash(mkdir -p out && touch out/a)?")
    assert.include(screen, "[a] yes, and always this session: Bash(mkdir -p out), Bash(touch out/a)")
    term.type("a")
    screen = await term.waitFor("touched twice")
    assert.include(screen, "→ allowed for the rest of this session: Bash(mkdir -p out), Bash(touch out/a)")
    // The second call is another command, covered by one of the rules: it is not asked (the rule is in the policy).
    assert.strictEqual(count(screen, "Allow Bash("), 1, `asked once:\n${screen}`)
    inOrder(screen, ["● Bash(mkdir -p out && touch out/a)", "● Bash(touch out/a)", "touched twice"])
    assert.isTrue(fs.existsSync(path.join(dir, "out", "a")))
    assert.notStrictEqual(toolResults(server, 2)[0].is_error, true)
  }, 90_000)

  it("'n' takes a reason that the model is told; the denial shows once, without tags; Esc denies without a reason", async () => {
    const { dir, server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "rm -rf build", description: "Remove the build folder" } }]),
      FakeAnthropic.textReply("I will leave the build folder alone."),
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch other.txt" } }]),
      FakeAnthropic.textReply("not touched")
    ])
    fs.mkdirSync(path.join(dir, "build"))
    enter(term, "clean up")
    await term.waitFor("Allow Bash(rm -rf build)?")
    term.type("n")
    await term.waitFor("Why not? (Enter to skip)")
    enter(term, "I still need the artifacts")
    let screen = await term.waitFor("I will leave the build folder alone.")
    assert.isTrue(fs.existsSync(path.join(dir, "build")), "the denied call did not run")
    const denied = toolResults(server, 1)[0]
    assert.strictEqual(denied.is_error, true)
    assert.include(JSON.stringify(denied.content), "I still need the artifacts", "the model is told the reason")
    assert.include(screen, "⎿ Denied by you: I still need the artifacts")
    assert.strictEqual(count(screen, "I still need the artifacts"), 1, `the denial shows once:\n${screen}`)
    assert.notInclude(screen, "The user denied")
    assert.notMatch(screen, NO_TAGS)

    enter(term, "touch another")
    await term.waitFor("Allow Bash(touch other.txt)?")
    term.send("Escape")
    screen = await term.waitFor("not touched")
    assert.match(screen, /⎿ Denied by you\n/)
    assert.notInclude(screen.slice(screen.indexOf("touch another")), "Why not?", "Esc asks no reason")
    assert.include(JSON.stringify(toolResults(server, 3)[0].content), "The user denied Bash(touch other.txt)")
    assert.isFalse(fs.existsSync(path.join(dir, "other.txt")))
    assert.notMatch(screen, NO_TAGS)
  })

  it("a tool error shows its first line without tags; Ctrl+C during a running call shows Interrupted", async () => {
    const { server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "ls no-such-dir" } }]),
      FakeAnthropic.textReply("it is not there"),
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "sleep 5" } }]),
      FakeAnthropic.textReply("never sent")
    ])
    enter(term, "list it")
    await term.waitFor("Allow Bash(ls no-such-dir)?")
    term.type("y")
    let screen = await term.waitFor("it is not there")
    assert.match(screen, /→ allowed once\n\s+⎿ Exit code 2 · [\d.]+ s\n/)
    assert.include(JSON.stringify(toolResults(server, 1)[0].content), "<tool_use_error>", "the model still gets the tags")
    assert.notMatch(screen, NO_TAGS)

    enter(term, "wait")
    await term.waitFor("Allow Bash(sleep 5)?")
    term.type("y")
    await term.waitFor(/Bash\(sleep 5\) running… \d+ s/, 30_000)
    term.send("C-c")
    screen = await term.waitFor(/● Bash\(sleep 5\)\n[^⎿]*→ allowed once\n\s+⎿ Interrupted\n/, 30_000)
    assert.notInclude(screen, "Interrupted by user")
    assert.notMatch(screen, NO_TAGS)
    const line = term.screen({ escapes: true }).split("\n").find((l) => l.includes("⎿") && /Interrupted(?!\.)/.test(l))!
    assert.match(line, /\x1b\[[0-9;]*2m/, "dim")
  }, 90_000)

  it("a call a rule denies shows the rule's message once, as its outcome, without tags", async () => {
    const { server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "rm -rf build" } }]),
      FakeAnthropic.textReply("the rule said no")
    ], { args: ["--disallowedTools", "Bash(rm:*)"] })
    enter(term, "clean up")
    const screen = await term.waitFor("the rule said no")
    assert.notInclude(screen, "Allow Bash(", "nothing is asked")
    const message = toolResults(server, 1)[0].content.replace(/<\/?tool_use_error>/g, "")
    assert.include(message, "Bash(rm:*)")
    assert.include(screen, `⎿ ${message}`)
    assert.strictEqual(count(screen, "Bash(rm:*)"), 1, `the denial shows once:\n${screen}`)
    assert.notMatch(screen, NO_TAGS)
  })

  it("over piped stdin, the answer is a line: `n` and the reason after it", async () => {
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "rm -rf build" } }]),
      FakeAnthropic.textReply("left alone")
    ])
    const dir = workdir()
    fs.mkdirSync(path.join(dir, "build"))
    const r = await run([], { env: envFor(server), cwd: dir, stdin: "clean up\nn not today\n" })
    assert.strictEqual(r.code, 0, r.stderr)
    inOrder(r.stdout, ["● Bash(rm -rf build)", "$ rm -rf build", "? Allow Bash(rm -rf build)?", "⎿ Denied by you: not today", "left alone"])
    assert.include(JSON.stringify(toolResults(server, 1)[0].content), "not today")
    assert.isTrue(fs.existsSync(path.join(dir, "build")))
  })
})
