/**
 * End to end: the input habits of the genre in the real `keel` REPL, driven in a pseudo-terminal
 * against the loopback fake API: the permission-mode row and Shift+Tab (which really changes what
 * the next tool calls may do), `!` shell mode (run, shown, stopped, and given to the model with the
 * next prompt), the live `/` menu, and Ctrl+O for the last tool call's whole output.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, workdir } from "./support/KeelProcess.js"
import { enter, PROMPT, repl } from "./support/Repl.js"
import * as Terminal from "./support/Terminal.js"

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

/** The rows of the screen from the last input line down (the live area under the output). */
const liveArea = (screen: string): string => screen.slice(screen.lastIndexOf(PROMPT))

/** Waits (bounded) until the screen passes `check`; returns it. */
const until = async (term: Terminal.Terminal, check: (screen: string) => boolean, what: string): Promise<string> => {
  for (let i = 0; i < 200 && !check(term.screen()); i++) await new Promise((r) => setTimeout(r, 50))
  const screen = term.screen()
  assert.isTrue(check(screen), `${what}:\n${screen}`)
  return screen
}

/** The last request's last message's tool_result blocks. */
const toolResults = (server: FakeAnthropic.FakeAnthropic, index: number): Array<any> =>
  server.requests[index]!.body.messages.at(-1).content.filter((b: any) => b.type === "tool_result")

/** The text of request `index`'s last user message. */
const lastUserText = (server: FakeAnthropic.FakeAnthropic, index: number): string => {
  const content = server.requests[index]!.body.messages.at(-1).content
  return typeof content === "string" ? content : content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("\n")
}

describe("keel REPL habits", () => {
  describe("permission mode", () => {
    it("shows the mode under the input line; Shift+Tab cycles default → accept edits → plan → default", async () => {
      const { term } = await repl([])
      assert.notInclude(liveArea(term.screen()), "accept edits on")
      term.send("BTab")
      let screen = await term.waitFor("⏵⏵ accept edits on (shift+tab to cycle)")
      assert.match(screen, /› \n⏵⏵ accept edits on/)
      term.send("BTab")
      screen = await term.waitFor("⏸ plan mode on (shift+tab to cycle)")
      assert.notInclude(screen, "accept edits on")
      term.send("BTab")
      await until(term, (s) => !s.includes("plan mode on"), "the plan mode row went")
      assert.notInclude(term.screen(), "accept edits on")
      // bypassPermissions is not in the cycle of a session that did not start with it allowed.
      assert.notInclude(term.screen(), "bypass")
    })

    it("in accept-edits mode an Edit runs without a question", async () => {
      const { dir, server, term } = await repl([
        FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }]),
        FakeAnthropic.toolUseReply([{ name: "Edit", input: { file_path: "README.md", old_string: "sheep", new_string: "goats" } }]),
        FakeAnthropic.textReply("Edited the readme.")
      ])
      term.send("BTab")
      await term.waitFor("accept edits on")
      enter(term, "count goats instead")
      // In the default mode the Edit waits for an answer, and this never comes.
      await term.waitFor("Edited the readme.")
      assert.include(fs.readFileSync(path.join(dir, "README.md"), "utf8"), "It counts goats.")
      assert.strictEqual(toolResults(server, 2)[0].is_error, undefined)
      assert.include(term.screen(), "accept edits on")
    })

    it("in plan mode a Write is refused without a question, and nothing is written", async () => {
      const { dir, server, term } = await repl([
        FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: "plan.txt", content: "x" } }]),
        FakeAnthropic.textReply("I will only plan.")
      ])
      term.send("BTab", "BTab")
      await term.waitFor("plan mode on")
      enter(term, "write plan.txt")
      await term.waitFor("I will only plan.")
      const [result] = toolResults(server, 1)
      assert.isTrue(result.is_error)
      assert.include(JSON.stringify(result.content), "plan mode")
      assert.isFalse(fs.existsSync(path.join(dir, "plan.txt")))
    })
  })

  describe("! shell mode", () => {
    it("hints the mode, runs the command in the session's folder, shows its output, and gives both to the model with the next prompt", async () => {
      const { server, term } = await repl([FakeAnthropic.textReply("It printed the folder's files.")])
      term.type("!ls; echo from-$((6*7))")
      await term.waitFor("shell mode")
      term.send("Enter")
      const screen = await term.waitFor("from-42")
      assert.match(screen, /! ls; echo from-\$\(\(6\*7\)\)\n\s+⎿ README\.md\n\s+from-42/)
      assert.notInclude(liveArea(screen), "shell mode")
      assert.strictEqual(server.requests.length, 0, "nothing went to the model")
      enter(term, "what did it print?")
      await term.waitFor("It printed the folder's files.")
      const sent = lastUserText(server, 0)
      assert.include(sent, "<bash-input>ls; echo from-$((6*7))</bash-input>")
      assert.match(sent, /<bash-stdout>README\.md\nfrom-42<\/bash-stdout><bash-stderr><\/bash-stderr>/)
      assert.isTrue(sent.trimEnd().endsWith("what did it print?"))
      // The prompt is echoed as typed, without the context before it.
      assert.match(term.screen(), /› what did it print\?\n/)
      assert.notInclude(term.screen(), "<bash-input>")
    })

    it("Ctrl+C stops the running command; a command past its time limit is stopped", async () => {
      const { dir, term } = await repl([], { env: { KEEL_TOOL_TIMEOUT_MS_BASH: "1500" } })
      enter(term, "!sleep 20; touch late.txt")
      await term.waitFor("! sleep 20; touch late.txt")
      term.send("C-c")
      await term.waitFor("Interrupted.", 5_000)
      enter(term, "!sleep 20")
      await term.waitFor("Stopped after 1.5 s (the time limit).", 8_000)
      assert.isFalse(fs.existsSync(path.join(dir, "late.txt")))
    })
  })

  describe("the / menu", () => {
    it("lists the commands with their descriptions as / is typed, filters them, and closes with Esc", async () => {
      const dir = workdir()
      fs.mkdirSync(path.join(dir, ".keel", "commands"), { recursive: true })
      fs.writeFileSync(path.join(dir, ".keel", "commands", "greet.md"), "---\ndescription: Say hello to the team\n---\nSay hello.\n")
      const { term } = await repl([], { dir })
      term.type("/")
      let screen = await term.waitFor(/› \/compact/)
      assert.match(screen, /› \/compact.*Summarise/)
      assert.match(screen, /\/cost\s+Show/)
      term.type("gr")
      screen = await term.waitFor(/› \/greet\s+Say hello to the team/)
      assert.notInclude(liveArea(screen), "/compact")
      term.send("BSpace", "BSpace")
      term.type("co")
      // The typed "/co" on the line, and the menu under it filtered (not the whole list "/" opened).
      screen = await until(term, (s) => !s.includes("/greet") && s.includes("/cost") && !liveArea(s).includes("/model"), "the menu lists /co…")
      assert.notInclude(liveArea(screen), "/model")
      term.send("Escape")
      screen = await until(term, (s) => !s.includes("/compact"), "Esc closed the menu")
      assert.match(screen, /› \/co$/m)
    })

    it("↑/↓ choose, Tab completes the chosen one; Enter on a command written out runs it; a recalled command opens no menu", async () => {
      const { term } = await repl([FakeAnthropic.textReply("Hi there.")])
      term.type("/co")
      await term.waitFor(/› \/compact/)
      term.send("Down")
      await term.waitFor(/› \/context/)
      term.send("Up", "Up")
      // From the first row, ↑ goes round to the last.
      await term.waitFor(/› \/cost/)
      term.send("Tab")
      let screen = await term.waitFor(/› \/cost $/m)
      assert.notInclude(liveArea(screen), "/compact")
      term.send("BSpace")
      await term.waitFor(/› \/cost\s+Show/)
      term.send("Enter")
      screen = await term.waitFor(/› \/cost\n/)
      await until(term, (s) => liveArea(s).trim() === PROMPT.trim(), "the command ran and the menu is closed")
      // A command recalled from history opens no menu: ↑ goes on through history.
      enter(term, "hello")
      await term.waitFor("context left")
      term.send("Up", "Up")
      screen = await term.waitFor(/› \/cost\s*$/)
      assert.notMatch(liveArea(screen), /Show/)
    })
  })

  describe("Ctrl+O", () => {
    it("prints the whole output of the last tool call, whose line shows only a count", async () => {
      const { term } = await repl([
        FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }]),
        FakeAnthropic.textReply("Read it.")
      ])
      term.send("C-o")
      await term.waitFor("No tool output yet.")
      enter(term, "read the readme")
      let screen = await term.waitFor("Read it.")
      assert.notInclude(screen, "It counts sheep.")
      term.send("C-o")
      screen = await term.waitFor("It counts sheep.")
      assert.match(screen, /⎿ whole output of Read\(README\.md\)\n.*# Demo project[\s\S]*It counts sheep\.[\s\S]*Three lines\./)
    })
  })
})
