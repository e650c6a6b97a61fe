/**
 * End to end: the REPL's live feedback and rendering, in a real terminal against the loopback fake
 * API: a retry's countdown (its seconds change, and it is gone once the retry starts), the working
 * line's elapsed time and output tokens, Markdown as formatted text (headings without `#`, lists,
 * tables with box characters, code), the status line after commands that change it (/compact,
 * /model, /clear, /resume), and `/help` as one aligned list with the REPL's own commands.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, workdir } from "./support/KeelProcess.js"
import { enter, repl } from "./support/Repl.js"
import * as Terminal from "./support/Terminal.js"

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

/** The status lines on `screen`, in order. */
const statusLines = (screen: string): Array<string> => screen.split("\n").filter((l) => l.includes("context left"))

describe("keel REPL feedback", () => {
  it("counts a retry down in the live area, and takes it away once the retry starts", async () => {
    const { server, term } = await repl([
      FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded", { "retry-after": "3" }),
      FakeAnthropic.textReply("recovered")
    ])
    enter(term, "hello")
    const first = Number(/⚠ retrying in (\d+) s \(1\/10\): overloaded/.exec(await term.waitFor(/retrying in \d+ s \(1\/10\)/))![1])
    assert.isAtLeast(first, 2)
    // A second later the same line shows fewer seconds.
    const later = await term.waitFor(new RegExp(`⚠ retrying in ${first - 1} s \\(1/10\\): overloaded`), 3_000)
    assert.notInclude(later, `retrying in ${first} s`)
    const screen = await term.waitFor(/recovered\n(.*\n)*.*context left/)
    assert.notInclude(screen, "retrying in", "the countdown is not left in the scrollback")
    assert.strictEqual(server.requests.length, 2)
  })

  it("shows the turn's elapsed seconds and streamed output tokens on the working line, live", async () => {
    const { term } = await repl([
      FakeAnthropic.textReply("The first words arrive, then a pause, then the rest of the answer.", {
        chunkSize: 8,
        keepAlive: { after: 4, pings: 14, everyMs: 250 }
      })
    ])
    enter(term, "go slowly")
    const first = /✻ working… (\d+) s · ↓ (\d+) tokens/.exec(await term.waitFor(/✻ working… \d+ s · ↓ \d+ tokens/))!
    assert.isAbove(Number(first[2]), 0)
    // The seconds go on while the stream pauses.
    await term.waitFor(new RegExp(`✻ working… ${Number(first[1]) + 1} s · ↓ ${first[2]} tokens`), 3_000)
    const done = await term.waitFor("context left")
    assert.notInclude(done, "working…", "the working line goes when the turn ends")
  })

  it("renders Markdown as formatted text: headings without markers, lists, aligned tables, code", async () => {
    const answer = "# Title\n\n## Plan\n\nSome **bold** text.\n\n### Steps\n\n1. first\n2. second\n\n- a bullet\n- another\n\n" +
      "| Name | Size |\n| --- | --- |\n| alpha | 1 |\n| beta-longer | 22 |\n\n```ts\nconst x: number = 1\n```\nDone."
    const { term } = await repl([FakeAnthropic.textReply(answer)])
    enter(term, "plan it")
    const screen = await term.waitFor("context left")
    assert.notInclude(screen, "#")
    assert.match(screen, /^Title$/m)
    assert.match(screen, /^Plan$/m)
    assert.match(screen, /^Steps$/m)
    assert.match(screen, /^1\. first\n2\. second$/m)
    assert.match(screen, /^\* a bullet\n\* another$/m)
    assert.match(screen, /^│ Name {8}│ Size │$/m)
    assert.match(screen, /^│ alpha {7}│ 1 {4}│$/m)
    assert.match(screen, /^│ beta-longer │ 22 {3}│$/m)
    assert.match(screen, /^ {2}const x: number = 1$/m)
    // With colours the headings are bold, the first two levels underlined.
    const escapes = term.screen({ escapes: true })
    assert.match(escapes, /\x1b\[[\d;]*4[\d;]*m[^\n]*Plan/)
    assert.match(escapes, /\x1b\[[\d;]*1[\d;]*m[^\n]*Steps/)

    const plain = await repl([FakeAnthropic.textReply(answer)], { env: { NO_COLOR: "1" } })
    enter(plain.term, "plan it")
    const plainScreen = await plain.term.waitFor("context left")
    assert.notInclude(plainScreen, "#")
    assert.match(plainScreen, /^Plan$/m)
  })

  it("refreshes the status line after /compact, /model and /clear", async () => {
    const { term } = await repl([
      FakeAnthropic.textReply("noted", { usage: { input_tokens: 9_000, output_tokens: 20 } }),
      FakeAnthropic.textReply("<summary>We noted it.</summary>")
    ])
    enter(term, "note this")
    await term.waitFor(/9\.0k\/200\.0k tokens/)
    enter(term, "/compact")
    const compacted = await term.waitFor(/compacted the conversation \(manual\): ~9k → ~(\d+) tokens\n.*context left/)
    const post = /~9k → ~(\d+) tokens/.exec(compacted)![1]!
    assert.match(statusLines(compacted).at(-1)!, new RegExp(` ${post}/200\\.0k tokens`))

    enter(term, "/model haiku")
    const switched = await term.waitFor(/Set model to (.*\n)*.*context left/)
    const haiku = /claude-haiku[\w-]*/.exec(statusLines(switched).at(-1)!)
    assert.isNotNull(haiku, `the status line shows the new model:\n${switched}`)

    enter(term, "/clear")
    const cleared = await term.waitFor(/› \/clear\n(.*\n)*.* 0\/200\.0k tokens · 100% context left · \$0\.0000/)
    assert.include(statusLines(cleared).at(-1)!, "claude-haiku")
  })

  it("after /resume, the status line shows the resumed conversation's context", async () => {
    const dir = workdir()
    const first = await repl([FakeAnthropic.textReply("remembered")], { dir })
    enter(first.term, `remember this: ${"kiwi ".repeat(400)}`)
    await first.term.waitFor("remembered")
    enter(first.term, "/exit")
    await first.term.waitFor("[keel exited 0]")

    const second = await repl([], { dir })
    await second.term.waitFor("› ")
    enter(second.term, "/resume 1")
    const screen = await second.term.waitFor(/› \/resume 1\n(.*\n)*.*context left/)
    const tokens = /· ([\d.]+)(k?)\/200\.0k tokens/.exec(statusLines(screen).at(-1)!)
    assert.isNotNull(tokens, screen)
    assert.isAtLeast(Number(tokens![1]) * (tokens![2] === "k" ? 1_000 : 1), 400, `an estimate of the resumed conversation:\n${screen}`)
  })

  it("/help lists every command in one aligned list, the REPL's own included, before the status line", async () => {
    const { term } = await repl([])
    enter(term, "/help")
    const screen = await term.waitFor(/\/exit .*\n(.*\n)*.*context left/)
    const rows = screen.split("\n").filter((l) => /^ {2}\/\w+/.test(l))
    const names = rows.map((l) => /^ {2}\/(\w+)/.exec(l)![1])
    for (const name of ["compact", "clear", "model", "help", "resume", "exit"]) assert.include(names, name)
    // Each description starts in the same column.
    const columns = new Set(rows.map((l) => /^ {2}\/\S+(?: \S+)*? {2,}(?=\S)/.exec(l)![0].length))
    assert.strictEqual(columns.size, 1, `aligned:\n${rows.join("\n")}`)
    const lines = screen.split("\n")
    const exitAt = lines.findIndex((l) => /^ {2}\/exit /.test(l))
    const statusAt = lines.findIndex((l) => l.includes("context left"))
    assert.isAbove(statusAt, exitAt, "the status line comes after the list")
  })
})
