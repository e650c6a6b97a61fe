/**
 * The deterministic context stages on fixed conversations (tool result budget, snip, microcompact,
 * context collapse), the pipeline's order, and a property test that no stage breaks the invariants.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  Autocompact,
  ContextCollapse,
  ContextManagement,
  Invariants,
  Message,
  Microcompact,
  Pipeline,
  Snip,
  TestModel,
  TokenEstimate,
  Stage,
  StageMemory,
  ToolResultBudget
} from "@keel/core"
import { Effect, FastCheck, Layer, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Conversations from "./support/Conversations.js"
import { resultOf, round } from "./support/ToolRounds.js"

const context: Stage.StageContext = { model: "m", iteration: 1, sessionId: "s1", maxTokens: 1_000 }

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-stages-"))

describe("ToolResultBudget", () => {
  it.effect("a result over 50,000 characters is saved to the session's folder and replaced by a preview and the path", () =>
    Effect.gen(function*() {
      const directory = tmp()
      const stage = yield* ToolResultBudget.make({ directory })
      const big = "line of output\n".repeat(5_000) // 75,000 characters
      const messages = [Message.user("go"), ...round("t1", "Bash", { command: "cat big" }, big)]
      const result = yield* stage.run(messages, context)
      const file = path.join(directory, "s1", "tool-results", "t1.txt")
      assert.strictEqual(fs.readFileSync(file, "utf8"), big)
      const replaced = resultOf(result.messages, "t1") as string
      assert.strictEqual(replaced, ToolResultBudget.replacement(file, big, 2_000))
      assert.include(replaced, `Full output saved to: ${file}`)
      assert.isBelow(replaced.length, 2_400)
      assert.deepStrictEqual(Invariants.violations(result.messages), [])
      // The original message was not mutated.
      assert.strictEqual(resultOf(messages, "t1"), big)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("decisions are stable per tool_use_id: a replaced result stays replaced with the same text, even in a new history", () =>
    Effect.gen(function*() {
      const stage = yield* ToolResultBudget.make({ directory: tmp() })
      const big = "x".repeat(60_000)
      const messages = [Message.user("go"), ...round("t1", "Bash", {}, big)]
      const first = yield* stage.run(messages, context)
      const replaced = resultOf(first.messages, "t1")
      // Next call: the history as the loop stored it, plus new messages: nothing changes.
      const next = [...first.messages, new Message.AssistantMessage({ content: [Message.text("ok")] }), Message.user("more")]
      const second = yield* stage.run(next, context)
      assert.strictEqual(second.messages, next)
      // A history given anew with the original result (as after a reload): the same replacement.
      const third = yield* stage.run([...messages, new Message.AssistantMessage({ content: [Message.text("ok")] }), Message.user("x")], context)
      assert.strictEqual(resultOf(third.messages, "t1"), replaced)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("the results of one message are capped at 200,000 characters together, the largest replaced first", () =>
    Effect.gen(function*() {
      const stage = yield* ToolResultBudget.make({ directory: tmp() })
      const sizes = [45_000, 49_000, 40_000, 48_000, 30_000] // 212,000 together
      const ids = sizes.map((_, i) => `t${i}`)
      const messages = [
        Message.user("go"),
        new Message.AssistantMessage({ content: ids.map((id) => TestModel.toolUse("Read", { file_path: id }, id)) }),
        Message.user(ids.map((id, i) => new Message.ToolResultBlock({ tool_use_id: id, content: "y".repeat(sizes[i]!) })))
      ]
      const result = yield* stage.run(messages, context)
      const replaced = ids.filter((id) => (resultOf(result.messages, id) as string).startsWith("<persisted-output>"))
      assert.deepStrictEqual(replaced, ["t1"])
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("ToolResultBudget with limits declared per tool", () => {
  /** Read bounds its output itself (`Infinity`); Grep declares 20,000; the others (Bash, MCP tools) declare none. */
  const declared: Stage.StageContext = {
    ...context,
    resultLimit: (name) => name === "Read" ? Infinity : name === "Grep" ? 20_000 : undefined
  }

  it.effect("a 61 KB Read result is kept whole; a 61 KB Bash result is still saved to a file", () =>
    Effect.gen(function*() {
      const stage = yield* ToolResultBudget.make({ directory: tmp() })
      const big = "const x = 1 // a line of a source file\n".repeat(1_550) // 61,550 characters
      const messages = [
        Message.user("go"),
        ...round("r1", "Read", { file_path: "/big.ts" }, big),
        ...round("b1", "Bash", { command: "cat /big.ts" }, big),
        ...round("m1", "mcp__srv__dump", {}, big)
      ]
      const result = yield* stage.run(messages, declared)
      assert.strictEqual(resultOf(result.messages, "r1"), big)
      assert.strictEqual(result.messages[2], messages[2])
      assert.isTrue((resultOf(result.messages, "b1") as string).startsWith("<persisted-output>"))
      assert.isTrue((resultOf(result.messages, "m1") as string).startsWith("<persisted-output>"))
      // Without the declarations (an embedder's context that names no limits) Read gets the generic budget.
      const generic = yield* (yield* ToolResultBudget.make({ directory: tmp() })).run(messages, context)
      assert.isTrue((resultOf(generic.messages, "r1") as string).startsWith("<persisted-output>"))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a tool's smaller declared limit lowers the threshold for its results only", () =>
    Effect.gen(function*() {
      const stage = yield* ToolResultBudget.make({ directory: tmp() })
      const text = "match\n".repeat(5_000) // 30,000 characters
      const messages = [Message.user("go"), ...round("g1", "Grep", { pattern: "x" }, text), ...round("b1", "Bash", {}, text)]
      const result = yield* stage.run(messages, declared)
      assert.isTrue((resultOf(result.messages, "g1") as string).startsWith("<persisted-output>"))
      assert.strictEqual(resultOf(result.messages, "b1"), text)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("the per-message budget replaces only results of tools that allow it: Read's stay whole", () =>
    Effect.gen(function*() {
      const stage = yield* ToolResultBudget.make({ directory: tmp() })
      const calls = [
        { id: "r1", name: "Read", size: 95_000 },
        { id: "r2", name: "Read", size: 90_000 },
        { id: "b1", name: "Bash", size: 45_000 },
        { id: "b2", name: "Bash", size: 40_000 }
      ] // 270,000 together
      const messages = [
        Message.user("go"),
        new Message.AssistantMessage({ content: calls.map((c) => TestModel.toolUse(c.name, {}, c.id)) }),
        Message.user(calls.map((c) => new Message.ToolResultBlock({ tool_use_id: c.id, content: "y".repeat(c.size) })))
      ]
      const result = yield* stage.run(messages, declared)
      const replaced = calls.map((c) => c.id).filter((id) => (resultOf(result.messages, id) as string).startsWith("<persisted-output>"))
      assert.deepStrictEqual(replaced, ["b1", "b2"])
      assert.strictEqual((resultOf(result.messages, "r1") as string).length, 95_000)
      // The decisions stand on the next call: nothing is examined again, nothing changes.
      const next = [...result.messages, new Message.AssistantMessage({ content: [Message.text("ok")] }), Message.user("more")]
      assert.strictEqual((yield* stage.run(next, declared)).messages, next)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("Snip", () => {
  it("an older read of a file read again unchanged is replaced by a note; changed files and other ranges are not", () => {
    const messages = [
      Message.user("go"),
      ...round("a1", "Read", { file_path: "/a" }, "A v1"),
      ...round("b1", "Read", { file_path: "/b" }, "B v1"),
      ...round("c1", "Read", { file_path: "/c", offset: 1 }, "C"),
      ...round("a2", "Read", { file_path: "/a" }, "A v1"),
      ...round("b2", "Read", { file_path: "/b" }, "B v2"),
      ...round("c2", "Read", { file_path: "/c", offset: 50 }, "C"),
      Message.user("next")
    ]
    const result = Snip.snip(messages)
    assert.strictEqual(result.snipped, 1)
    assert.strictEqual(resultOf(result.messages, "a1"), Snip.STALE)
    for (const id of ["a2", "b1", "b2", "c1", "c2"]) assert.strictEqual(resultOf(result.messages, id), resultOf(messages, id))
    assert.deepStrictEqual(Invariants.requestViolations(result.messages), [])
    assert.strictEqual(Snip.snip(result.messages).messages, result.messages)
  })
})

describe("Snip stage", () => {
  it.effect("indexes reads as they arrive: a later unchanged read replaces the earlier one, across calls", () =>
    Effect.gen(function*() {
      const stage = yield* Snip.make()
      const first = [Message.user("go"), ...round("a1", "Read", { file_path: "/a" }, "A"), Message.user("more")]
      assert.strictEqual((yield* stage.run(first, context)).messages, first)
      const second = [
        ...first,
        new Message.AssistantMessage({ content: [Message.text("ok")] }),
        Message.user("again"),
        ...round("a2", "Read", { file_path: "/a" }, "A")
      ]
      const result = yield* stage.run(second, context)
      assert.strictEqual(resultOf(result.messages, "a1"), Snip.STALE)
      assert.strictEqual(resultOf(result.messages, "a2"), "A")
      assert.strictEqual(result.report, "replaced 1 stale read(s) of unchanged files")
    }))
})

describe("Microcompact", () => {
  const reads = (n: number) => Array.from({ length: n }, (_, i) => round(`r${i}`, "Read", { file_path: `/f${i}` }, `file ${i} `.repeat(100))).flat()

  it("clears all but the 5 most recent results of the listed tools; the last message's results are not touched", () => {
    const messages = [
      Message.user("go"),
      ...reads(8),
      ...round("s1", "Sleep", { ms: 1 }, "slept"),
      ...round("r-new", "Read", { file_path: "/new" }, "just read, not seen yet")
    ]
    const result = Microcompact.clear(messages, { keepRecent: 5, tools: Microcompact.DEFAULT_TOOLS })
    assert.strictEqual(result.cleared, 3)
    assert.deepStrictEqual(["r0", "r1", "r2"].map((id) => resultOf(result.messages, id)), Array(3).fill(Microcompact.CLEARED))
    for (const id of ["r3", "r4", "r5", "r6", "r7", "s1", "r-new"]) assert.strictEqual(resultOf(result.messages, id), resultOf(messages, id))
    assert.deepStrictEqual(Invariants.requestViolations(result.messages), [])
  })

  it.effect("runs when the conversation passes the threshold, or after a 60-minute idle gap in the same session (under TestClock)", () =>
    Effect.gen(function*() {
      const messages = [Message.user("go"), ...reads(8), Message.user("next")]
      const size = Math.ceil(JSON.stringify(messages.map(Message.toParam)).length / 4)
      // The idle gap is remembered in the session's stage memory.
      const session = { ...context, memory: yield* StageMemory.make }
      const other = { ...context, memory: yield* StageMemory.make }
      // A threshold above the conversation: nothing, until an hour passes between calls.
      const stage = yield* Microcompact.make({ triggerTokens: size * 10 })
      assert.strictEqual((yield* stage.run(messages, session)).messages, messages)
      yield* TestClock.adjust("59 minutes")
      assert.strictEqual((yield* stage.run(messages, session)).messages, messages)
      yield* TestClock.adjust("60 minutes")
      // Another session (same id, its own memory) has no gap: its first call.
      assert.strictEqual((yield* stage.run(messages, other)).messages, messages)
      const idle = yield* stage.run(messages, session)
      assert.strictEqual(resultOf(idle.messages, "r0"), Microcompact.CLEARED)
      assert.include(idle.report!, "idle")
      // A threshold below the conversation: at once.
      const low = yield* Microcompact.make({ triggerTokens: 100 })
      assert.strictEqual(resultOf((yield* low.run(messages, context)).messages, "r2"), Microcompact.CLEARED)
    }))
})

describe("ContextCollapse", () => {
  /** 30 turns, each with two tool calls and an answer. */
  const turns = (n: number) =>
    Array.from({ length: n }, (_, t) => [
      Message.user(`prompt ${t}`),
      ...round(`a${t}`, "Read", { file_path: `/src/${t}.ts` }, "code ".repeat(200)),
      ...round(`b${t}`, "Bash", { command: `npm test -- ${t}` }, "ok"),
      new Message.AssistantMessage({ content: [Message.text(`answer ${t}`)], id: `final_${t}` })
    ]).flat()

  it("keeps the last 5 turns verbatim, folds turns 5–20 back to prompt, calls and answer, older ones to a line", () => {
    const messages = [...turns(30), Message.user("prompt 30")]
    const result = ContextCollapse.collapse(messages, { verbatimTurns: 5, summarizedTurns: 20 })
    // 31 turns: the last 5 (26–30) verbatim; 11–25 folded with calls; 0–10 one line each.
    assert.strictEqual(result.folded, 26)
    assert.deepStrictEqual(Invariants.requestViolations(result.messages), [])
    const texts = result.messages.map((m) => (m instanceof Message.AssistantMessage ? m.text : ""))
    assert.strictEqual(texts[1], "[earlier turn, collapsed] answer 0 (2 tool calls)")
    const folded = texts[2 * 15 + 1]!
    assert.strictEqual(folded, "[earlier turn, tool calls folded]\n- Read(file_path=/src/15.ts)\n- Bash(command=npm test -- 15)\n\nanswer 15")
    // The verbatim tail is the same messages.
    assert.deepStrictEqual(result.messages.slice(-21), messages.slice(-21))
    // Deterministic and idempotent.
    assert.deepStrictEqual(ContextCollapse.collapse(messages, { verbatimTurns: 5, summarizedTurns: 20 }).messages, result.messages)
    assert.strictEqual(ContextCollapse.collapse(result.messages, { verbatimTurns: 5, summarizedTurns: 20 }).folded, 0)
  })

  it.effect("the stage runs only above 60 % of the window", () =>
    Effect.gen(function*() {
      const messages = [...turns(10), Message.user("go on")]
      const size = TokenEstimate.ofRequest(messages)
      const above = ContextCollapse.make({ window: Math.floor(size / 0.6) - 10 })
      const below = ContextCollapse.make({ window: Math.floor(size / 0.6) + 10 })
      assert.strictEqual((yield* below.run(messages, context)).messages, messages)
      assert.notStrictEqual((yield* above.run(messages, context)).messages, messages)
    }))
})

describe("ContextManagement", () => {
  it.effect("the stages run least invasive first: budget, snip, microcompact, collapse, autocompact", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      assert.deepStrictEqual(pipeline.stages.map((s) => s.id.name), [
        "tool-result-budget",
        "snip",
        "microcompact",
        "context-collapse",
        "autocompact"
      ])
      // Each is the built-in stage of that name (stage identities compare by object).
      const ids = [ToolResultBudget.id, Snip.id, Microcompact.id, ContextCollapse.id, Autocompact.id]
      pipeline.stages.forEach((s, i) => assert.strictEqual(s.id, ids[i]))
    }).pipe(Effect.provide(ContextManagement.layer({ directory: tmp() }).pipe(
      Layer.provide(Layer.merge(TestModel.layer([]), NodeContext.layer))
    ))))

  it.effect("no stage breaks the invariants or changes the messages it is given, on generated conversations (property)", () =>
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      const samples = FastCheck.sample(Conversations.shapes, { numRuns: 200, seed: 11 })
      let changed = 0
      for (const shape of samples) {
        const messages = Conversations.build(shape)
        const before = JSON.stringify(messages)
        for (const stage of pipeline.stages.slice(0, 4)) {
          const result = yield* stage.run(messages, { ...context, sessionId: `p${changed}` })
          if (result.messages !== messages) changed++
          assert.deepStrictEqual(Invariants.requestViolations(result.messages), [], `${stage.id.name}: ${JSON.stringify(shape)}`)
          // Stages make new messages; the ones they were given (already emitted) are unchanged.
          assert.strictEqual(JSON.stringify(messages), before)
        }
      }
      assert.isAbove(changed, 50)
    }).pipe(Effect.provide(ContextManagement.layer({ directory: tmp(), window: 4_000 }).pipe(
      Layer.provide(Layer.merge(TestModel.layer([]), NodeContext.layer))
    ))))
})

describe("Pipeline", () => {
  it.effect("a stage is held only to what it newly breaks, not to what its input already broke", () =>
    Effect.gen(function*() {
      // An imported answer that ends in a thinking block (cut inside its thinking).
      const cut = new Message.AssistantMessage({
        content: [Message.text("a"), new Message.ThinkingBlock({ thinking: "t", signature: "s" })]
      })
      const messages = [Message.user("x".repeat(100)), cut, Message.user("go on")]
      const shorten: Stage.Stage = {
        id: Stage.id("shorten"),
        run: (ms) => Effect.succeed({ messages: [Message.user("x"), ...ms.slice(1)], report: "shortened" })
      }
      const breaks: Stage.Stage = {
        id: Stage.id("breaks"),
        run: (ms) => Effect.succeed({ messages: ms.slice(0, 2).concat([Message.user([new Message.ToolResultBlock({ tool_use_id: "nope" })])]), report: "broke" })
      }
      const prepared = yield* Pipeline.make([shorten, breaks]).run(messages, context)
      assert.strictEqual(textOfFirst(prepared.messages), "x")
      assert.deepStrictEqual(prepared.reports.map((r) => `${r.stage}: ${r.report}`), [
        "shorten: shortened",
        "breaks: discarded: its output broke message 2: tool_result nope answers no tool_use of the previous message"
      ])
    }))
})

const textOfFirst = (messages: ReadonlyArray<Message.Message>) => messages[0]!.content

describe("The API payload (normalization)", () => {
  it("consecutive messages of one role are merged, so roles alternate; tool results stay first", () => {
    const messages = [
      Message.user("first prompt"),
      Message.user("second prompt, after an interrupted turn"),
      ...round("t1", "Read", { file_path: "/a" }, "A"),
      Message.user("and a prompt right after the tool result")
    ]
    const params = Message.toParams(messages)
    assert.deepStrictEqual(params.map((p) => p.role), ["user", "assistant", "user"])
    assert.deepStrictEqual(params[0]!.content, [
      { type: "text", text: "first prompt" },
      { type: "text", text: "second prompt, after an interrupted turn" }
    ])
    const last = params[2]!.content as Array<{ type: string }>
    assert.deepStrictEqual(last.map((b) => b.type), ["tool_result", "text"])
    // Nothing to merge: the cached params themselves.
    const plain = [Message.user("a"), new Message.AssistantMessage({ content: [Message.text("b")] })]
    assert.deepStrictEqual(Message.toParams(plain), plain.map(Message.toParam))
  })

  it("on generated conversations with extra prompts inserted, roles alternate and every tool_use is answered next (property)", () => {
    const samples = FastCheck.sample(
      FastCheck.tuple(Conversations.shapes, FastCheck.array(FastCheck.nat(), { maxLength: 3 })),
      { numRuns: 200, seed: 5 }
    )
    for (const [shape, extra] of samples) {
      const messages = Conversations.build(shape)
      // Extra prompts after answers (where a turn was interrupted before its answer).
      for (const at of extra) {
        const i = at % messages.length
        if (messages[i] instanceof Message.AssistantMessage && messages[i]!.toolUses.length === 0) {
          messages.splice(i + 1, 0, Message.user("an extra prompt"))
        }
      }
      const params = Message.toParams(messages)
      params.forEach((p, i) => {
        if (i > 0) assert.notStrictEqual(p.role, params[i - 1]!.role)
        if (p.role !== "assistant" || typeof p.content === "string") return
        const ids = p.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id)
        const next = params[i + 1]?.content
        const answered = Array.isArray(next) ? next.filter((b) => b.type === "tool_result").map((b) => (b as { tool_use_id: string }).tool_use_id) : []
        for (const id of ids) assert.include(answered, id)
      })
    }
  })
})
