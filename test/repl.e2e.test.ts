/**
 * End to end: the interactive REPL of the real `keel` binary, driven in a real terminal (a pseudo-terminal and a terminal emulator)
 * against the loopback fake API: a streamed Markdown answer, tool call lines, Ctrl+C mid-turn,
 * slash commands, permission questions answered each way, history, multi-line input, colours,
 * prompts queued while a turn runs (listed under the input line, pulled back with ↑, dropped with
 * Esc, moved along by /resume), and the REPL over piped stdin.
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

/** The last request's last message's tool_result blocks. */
const toolResults = (server: FakeAnthropic.FakeAnthropic, index: number): Array<any> =>
  server.requests[index]!.body.messages.at(-1).content.filter((b: any) => b.type === "tool_result")

const waitUntil = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 50))
  assert.isTrue(check(), what)
}

/** An answer that takes about `seconds` to finish: its first words, then pings, then the rest. */
const slowReply = (text: string, seconds = 4) =>
  FakeAnthropic.textReply(text, { chunkSize: 5, keepAlive: { after: 4, pings: seconds * 4, everyMs: 250 } })

/** The text of each request's last user message (what each turn was asked). */
const asked = (server: FakeAnthropic.FakeAnthropic): Array<string> =>
  server.requests.map((r) => {
    const content = r.body.messages.at(-1).content
    return typeof content === "string" ? content : content.filter((b: any) => b.type === "text").map((b: any) => b.text).at(-1)
  })

/** Asserts that `texts` appear on `screen` in this order. */
const inOrder = (screen: string, texts: ReadonlyArray<string>) => {
  const at = texts.map((t) => screen.indexOf(t))
  assert.isFalse(at.includes(-1), `all of ${JSON.stringify(texts)} on screen:\n${screen}`)
  assert.deepStrictEqual([...at].sort((a, b) => a - b), at, `in this order: ${JSON.stringify(texts)}\n${screen}`)
}

describe("keel REPL", () => {
  it("streams the answer as it comes, renders its Markdown, and ends the turn with the status line", async () => {
    const answer = "Hello **there**, see `main.ts`.\n\n- first item\n- second item\n\n```js\nconst x = 1\n```\nAll done."
    // The stream pauses (pings only) after its first text deltas: the first part must be on screen before the rest exists.
    const { term } = await repl([
      FakeAnthropic.textReply(answer, { chunkSize: 8, keepAlive: { after: 4, pings: 4, everyMs: 500 } })
    ])
    term.type("say hello")
    term.send("Enter")
    const partial = await term.waitFor("Hello")
    assert.notInclude(partial, "All done.")
    const screen = await term.waitFor("context left")
    assert.include(screen, "Hello there, see main.ts.")
    assert.notInclude(screen, "**there**")
    assert.match(screen, /\* first item\n\* second item/)
    assert.include(screen, "  const x = 1")
    assert.notInclude(screen, "```")
    assert.include(screen, "All done.")
    assert.match(screen, /claude-fake · [\d.]+k?\/200\.0k tokens · \d+% context left · \$\d+\.\d{4}/)
  })

  it("shows each tool call as a line with its input, then its outcome and time", async () => {
    const { server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }]),
      FakeAnthropic.textReply("The README has four lines.")
    ])
    term.type("what is in the readme?")
    term.send("Enter")
    const screen = await term.waitFor("The README has four lines.")
    assert.match(screen, /● Read\(README\.md\)\n\s+⎿ 4 lines · \d+\.\d s/)
    assert.strictEqual(toolResults(server, 1)[0].is_error, undefined)
  })

  it("Ctrl+C mid-turn interrupts it and gives a new prompt; the next turn sends a valid conversation", async () => {
    const { server, term } = await repl([
      { ...FakeAnthropic.textReply("this answer never finishes"), stallAfter: 4 },
      FakeAnthropic.textReply("second answer")
    ])
    term.type("first")
    term.send("Enter")
    await waitUntil(() => server.requests.length === 1, "the first request went out")
    await term.waitFor("this")
    term.send("C-c")
    await term.waitFor("Interrupted.")
    await term.waitFor(/Interrupted\.\n.*context left.*\n› $/m)
    term.type("second")
    term.send("Enter")
    await term.waitFor("second answer")
    // The cut answer is not kept: the conversation goes on from the first prompt, the note that the
    // user interrupted it, then the second prompt.
    const messages = server.requests[1]!.body.messages
    assert.deepStrictEqual(messages.map((m: any) => m.role), ["user"])
    assert.deepStrictEqual(messages[0].content.map((b: any) => b.text), ["first", "[Request interrupted by user]", "second"])
  })

  it("/cost prints the session's cost and usage without calling the model", async () => {
    const { server, term } = await repl([FakeAnthropic.textReply("hi", { usage: { input_tokens: 1200, output_tokens: 30 } })])
    term.type("hello")
    term.send("Enter")
    await term.waitFor("context left")
    term.type("/cost")
    term.send("Enter")
    const screen = await term.waitFor("Usage by model:")
    assert.match(screen, /Total cost: +\$\d+\.\d{4}/)
    assert.match(screen, /1,200 input, 30 output/)
    assert.strictEqual(server.requests.length, 1)
  })

  it("a permission question answered y runs the call once; answered n denies it and tells the model", async () => {
    const { dir, server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo one > one.txt" } }]),
      FakeAnthropic.textReply("wrote one"),
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo two > two.txt" } }]),
      FakeAnthropic.textReply("could not write two")
    ])
    term.type("write one")
    term.send("Enter")
    await term.waitFor("Allow Bash(echo one > one.txt)?")
    assert.isFalse(fs.existsSync(path.join(dir, "one.txt")), "nothing runs before the answer")
    term.type("y")
    await term.waitFor("wrote one")
    assert.strictEqual(fs.readFileSync(path.join(dir, "one.txt"), "utf8"), "one\n")
    assert.notStrictEqual(toolResults(server, 1)[0].is_error, true)

    term.type("write two")
    term.send("Enter")
    await term.waitFor("Allow Bash(echo two > two.txt)?")
    term.type("n")
    await term.waitFor("Why not?")
    term.send("Enter")
    const screen = await term.waitFor("could not write two")
    assert.include(screen, "⎿ Denied by you")
    assert.isFalse(fs.existsSync(path.join(dir, "two.txt")))
    const denied = toolResults(server, 3)[0]
    assert.strictEqual(denied.is_error, true)
    assert.include(JSON.stringify(denied.content), "The user denied Bash(echo two > two.txt)")
  })

  it("'always' allows the same call for the rest of the session without asking again", async () => {
    const call = { name: "Bash", input: { command: "echo again >> log.txt" } }
    const { dir, term } = await repl([
      FakeAnthropic.toolUseReply([call]),
      FakeAnthropic.toolUseReply([call]),
      FakeAnthropic.textReply("appended twice")
    ])
    term.type("append twice")
    term.send("Enter")
    await term.waitFor("Allow Bash(echo again >> log.txt)?")
    term.type("a")
    const screen = await term.waitFor("appended twice")
    assert.strictEqual(screen.split("Allow Bash(").length - 1, 1, "asked once")
    assert.strictEqual(fs.readFileSync(path.join(dir, "log.txt"), "utf8"), "again\nagain\n")
  })

  it("Ctrl+C at an idle prompt warns; a second one exits and says how to resume", async () => {
    const { term } = await repl([])
    term.send("C-c")
    await term.waitFor("press Ctrl+C again to exit")
    term.send("C-c")
    const screen = await term.waitFor("[keel exited 0]")
    assert.match(screen, /Resume this session with: keel --resume [0-9a-f-]{36}/)
  })

  it("keeps input history across runs (Up recalls it) and takes multi-line input with a trailing backslash", async () => {
    const dir = workdir()
    const first = await repl([FakeAnthropic.textReply("ok 1")], { dir })
    first.term.type("line one\\")
    first.term.send("Enter")
    first.term.type("line two")
    first.term.send("Enter")
    await first.term.waitFor("ok 1")
    assert.strictEqual(first.server.requests[0]!.body.messages[0].content.at(-1).text ?? first.server.requests[0]!.body.messages[0].content, "line one\nline two")
    first.term.send("C-d")
    await first.term.waitFor("[keel exited 0]")

    const second = await repl([FakeAnthropic.textReply("ok 2")], { dir })
    second.term.send("Up")
    await second.term.waitFor(/› line one\n/)
    second.term.send("Enter")
    await second.term.waitFor("ok 2")
    assert.strictEqual(second.server.requests[0]!.body.messages[0].content.at(-1).text ?? second.server.requests[0]!.body.messages[0].content, "line one\nline two")
  })

  it("Tab completes slash commands", async () => {
    const { term } = await repl([])
    term.type("/he")
    term.send("Tab")
    await term.waitFor("› /help ")
    term.send("Enter")
    const screen = await term.waitFor("/resume")
    assert.include(screen, "/compact")
    assert.include(screen, "/exit")
  })

  it("colours the output in a terminal, and not with NO_COLOR", async () => {
    const coloured = await repl([FakeAnthropic.textReply("plain **bold**")])
    coloured.term.type("x")
    coloured.term.send("Enter")
    await coloured.term.waitFor("context left")
    assert.include(coloured.term.screen({ escapes: true }), "\x1b[")

    const plain = await repl([FakeAnthropic.textReply("plain **bold**")], { env: { NO_COLOR: "1" } })
    plain.term.type("x")
    plain.term.send("Enter")
    await plain.term.waitFor("context left")
    assert.include(plain.term.screen(), "plain bold")
    assert.notInclude(plain.term.screen({ escapes: true }), "\x1b[")
  })

  it("shows retries, compaction and long tool calls as short notices", async () => {
    const { term } = await repl(
      [
        FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "sleep 2.5 && seq 1 3000" } }]),
        FakeAnthropic.textReply("slept", { usage: { input_tokens: 9_000, output_tokens: 20 } }),
        FakeAnthropic.textReply("<summary>We slept.</summary>")
      ],
      { args: ["--allowedTools", "Bash"] }
    )
    term.type("sleep a bit")
    term.send("Enter")
    await term.waitFor(/⚠ retrying in \d+(\.\d)? s \(1\/10\): overloaded/)
    await term.waitFor(/⎿ Bash\(sleep 2\.5 && seq 1 3000\) running… [12] s/)
    const screen = await term.waitFor("slept")
    // The progress line was replaced by the outcome.
    assert.match(screen, /● Bash\(sleep 2\.5 && seq 1 3000\)\n\s+⎿ 3000 lines · \d\.\d s\n/)
    term.type("/compact")
    term.send("Enter")
    await term.waitFor(/✻ compacted the conversation \(manual\): ~\d+k? → ~\d+k? tokens/)
  })

  it("/resume lists this folder's sessions and switches to one, carrying its conversation", async () => {
    const dir = workdir()
    const first = await repl([FakeAnthropic.textReply("remembered")], { dir })
    first.term.type("remember the word kiwi")
    first.term.send("Enter")
    await first.term.waitFor("remembered")
    first.term.type("/exit")
    first.term.send("Enter")
    const id = /keel --resume ([0-9a-f-]{36})/.exec(await first.term.waitFor("[keel exited 0]"))![1]!

    const second = await repl([FakeAnthropic.textReply("it was kiwi")], { dir })
    second.term.type("/resume")
    second.term.send("Enter")
    await second.term.waitFor(new RegExp(` 1\\. ${id} .*remember the word kiwi`))
    second.term.type("/resume 1")
    second.term.send("Enter")
    await second.term.waitFor(`Resumed session ${id} (2 messages).`)
    second.term.type("what was the word?")
    second.term.send("Enter")
    await second.term.waitFor("it was kiwi")
    const messages = second.server.requests[0]!.body.messages
    assert.deepStrictEqual(messages.map((m: any) => m.role), ["user", "assistant", "user"])
    assert.include(JSON.stringify(messages[0]), "remember the word kiwi")
  })

  it("a prompt entered while a turn runs is queued and listed under the input line; it runs after, in order", async () => {
    const { server, term } = await repl([slowReply("The first answer, slowly."), FakeAnthropic.textReply("The second answer.")])
    enter(term, "first question")
    await term.waitFor("The f")
    enter(term, "second question")
    // Listed dim under the (empty again) input line, below the working indicator; not sent yet.
    const queued = await term.waitFor(/✻ working… .*\n› *\n {2}> second question \(↑ to edit\)/)
    assert.notInclude(queued, "› second question", "not echoed before its turn")
    assert.strictEqual(server.requests.length, 1)
    const screen = await term.waitFor("The second answer.")
    inOrder(screen, ["› first question", "The first answer, slowly.", "context left", "› second question", "The second answer."])
    await term.waitFor(/The second answer\.\n.*context left.*\n› *$/m)
    assert.notMatch(term.screen(), /> second question/, "the list is empty once its turn started")
    assert.deepStrictEqual(asked(server), ["first question", "second question"])
    // The second turn went on from the first one's answer.
    assert.deepStrictEqual(server.requests[1]!.body.messages.map((m: any) => m.role), ["user", "assistant", "user"])
  })

  it("↑ on an empty line pulls the last queued prompt back; it does not run, and runs edited once entered again", async () => {
    const { server, term } = await repl([slowReply("Answer one."), FakeAnthropic.textReply("Answer two.")])
    enter(term, "one")
    await term.waitFor("Answer")
    enter(term, "two, draft")
    await term.waitFor("> two, draft (↑ to edit)")
    term.send("Up")
    // Back in the input line, and gone from the list.
    const pulled = await term.waitFor(/› two, draft *\n/)
    assert.notInclude(pulled, "> two, draft")
    term.type(" (edited)")
    term.send("Enter")
    await term.waitFor("> two, draft (edited) (↑ to edit)")
    const screen = await term.waitFor("Answer two.")
    inOrder(screen, ["› one", "Answer one.", "› two, draft (edited)", "Answer two."])
    assert.deepStrictEqual(asked(server), ["one", "two, draft (edited)"])
  })

  it("Esc drops a pulled-back prompt; then Esc on the empty line interrupts the turn and what is still queued runs", async () => {
    const { server, term } = await repl([
      { ...FakeAnthropic.textReply("this answer never finishes"), stallAfter: 4 },
      FakeAnthropic.textReply("kept and answered")
    ])
    enter(term, "first")
    await term.waitFor("this")
    enter(term, "keep me")
    enter(term, "drop me")
    await term.waitFor(/> keep me\n {2}> drop me \(↑ to edit\)/)
    term.send("Up")
    await term.waitFor(/› drop me *\n {2}> keep me \(↑ to edit\)/)
    term.send("Escape")
    await term.waitFor("(queued prompt dropped)")
    assert.match(term.screen(), /› *\n {2}> keep me \(↑ to edit\)/)
    term.send("Escape")
    const screen = await term.waitFor("kept and answered")
    inOrder(screen, ["› first", "Interrupted.", "› keep me", "kept and answered"])
    assert.notInclude(screen, "› drop me")
    assert.deepStrictEqual(asked(server), ["first", "keep me"])
  })

  it("prompts queued behind /resume run on the session it switched to", async () => {
    const dir = workdir()
    const first = await repl([FakeAnthropic.textReply("remembered")], { dir })
    enter(first.term, "remember the word kiwi")
    await first.term.waitFor("remembered")
    enter(first.term, "/exit")
    const id = /keel --resume ([0-9a-f-]{36})/.exec(await first.term.waitFor("[keel exited 0]"))![1]!

    const second = await repl([slowReply("Warmed up."), FakeAnthropic.textReply("it was kiwi")], { dir })
    enter(second.term, "warm up")
    await second.term.waitFor("Warm")
    enter(second.term, "/resume 1")
    enter(second.term, "what was the word?")
    await second.term.waitFor(/> \/resume 1\n {2}> what was the word\? \(↑ to edit\)/)
    const screen = await second.term.waitFor("it was kiwi")
    inOrder(screen, ["Warmed up.", "› /resume 1", `Resumed session ${id} (2 messages).`, "› what was the word?", "it was kiwi"])
    const messages = second.server.requests[1]!.body.messages
    assert.deepStrictEqual(messages.map((m: any) => m.role), ["user", "assistant", "user"])
    assert.include(JSON.stringify(messages[0]), "remember the word kiwi")
    assert.notInclude(JSON.stringify(messages), "warm up")
  })

  it("over piped stdin, each line is a prompt run to its end before the next; slash commands too; end of input leaves", async () => {
    const server = await fake([FakeAnthropic.textReply("first answer"), FakeAnthropic.textReply("second answer")])
    const r = await run([], { env: envFor(server), stdin: "first prompt\n/cost\nsecond \\\nprompt\n" })
    assert.strictEqual(r.code, 0, r.stderr)
    inOrder(r.stdout, ["first prompt\n", "first answer", "/cost\n", "Total cost:", "second \nprompt\n", "second answer", "Resume this session with: keel --resume"])
    assert.notInclude(r.stdout, "\x1b[", "no colours or cursor moves")
    assert.deepStrictEqual(asked(server), ["first prompt", "second \nprompt"])
  })
})
