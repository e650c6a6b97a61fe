/**
 * Context management over the scripted `TestModel`: token accounting, autocompact at its exact
 * threshold, what the compacted request carries, reactive compaction on `PromptTooLong`, the
 * circuit breaker, and continuations after answers cut by `max_tokens`.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  Autocompact,
  BuiltinCommands,
  Compactor,
  ContextAssembly,
  Hooks,
  Ids,
  Invariants,
  Message,
  ModelError,
  type ModelRequest,
  Permissions,
  Pipeline,
  Session,
  SessionStore,
  SummaryPrompt,
  TestModel,
  TokenEstimate,
  Tool,
  ToolRegistry,
  ToolRuntime,
  TurnLoop
} from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Chunk, Effect, FastCheck, Layer, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Conversations from "./support/Conversations.js"
import { messagesOf } from "./support/Sessions.js"

const WINDOW = 40_000
const MAX_TOKENS = 1_000
/** window − min(max output, 20K) − 13K */
const THRESHOLD = WINDOW - MAX_TOKENS - 13_000

/** A Read tool as Claude Code names it: returns the file's text. */
const read = Tool.make({
  name: "Read",
  description: "Reads a file",
  input: Schema.Struct({ file_path: Schema.String }),
  isReadOnly: true,
  call: (input) => Effect.sync(() => fs.readFileSync(input.file_path, "utf8"))
})

/**
 * What a session needs besides the model and its context management: `Read` with every call
 * allowed, the short built-in prompt, nothing persisted.
 */
const sessionServices = Layer.mergeAll(
  ToolRuntime.layer().pipe(
    Layer.provideMerge(ToolRegistry.layer([read])),
    Layer.provideMerge(Permissions.layerAllowAll)
  ),
  ContextAssembly.layerMinimal,
  SessionStore.layerNoop,
  BuiltinCommands.layer,
  Ids.layerSeeded(1),
  Hooks.layerNone
)

const layerFor = (script: ReadonlyArray<TestModel.ScriptItem>, options: Autocompact.Options = {}) => {
  const model = TestModel.layer(script)
  return Layer.mergeAll(
    model,
    Autocompact.layer({ window: WINDOW, ...options }).pipe(Layer.provide(model), Layer.provide(NodeContext.layer)),
    sessionServices
  )
}

const isSummary = (request: ModelRequest.ModelRequest) =>
  JSON.stringify(request.messages.at(-1)?.content ?? "").includes(SummaryPrompt.HEADING)

/** A model that writes summaries when asked and otherwise follows `main`. */
const withSummaries = (main: (n: number) => TestModel.Reply): ReadonlyArray<TestModel.ScriptItem> => {
  let summaries = 0
  let calls = 0
  const item = (request: ModelRequest.ModelRequest): TestModel.Reply =>
    isSummary(request) ? TestModel.text(`SUMMARY-${++summaries}: the user wants things done.`) : main(++calls)
  return Array.from({ length: 30 }, () => item)
}

const collect = (stream: Stream.Stream<SdkMessage.SdkMessage>) => Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray))

const kinds = (messages: ReadonlyArray<SdkMessage.SdkMessage>) =>
  messages.map((m) => (m.type === "system" ? `system/${m.subtype}${m.subtype === "status" ? `:${m.status}` : ""}` : m.type))

const requests = Effect.flatMap(TestModel.TestModel, (m) => m.requests)

const textOf = (message: Message.Message) => JSON.stringify(Message.toParam(message).content)

/** A finished answer with the given usage, as history. */
const answered = (text: string, inputTokens: number) =>
  TestModel.message([new Message.TextBlock({ text })], { usage: { input_tokens: inputTokens, output_tokens: 5 } })

const options = { model: "claude-test", cwd: "/work", maxTokens: MAX_TOKENS } as const

/** A file the model reads in the tests, to be restored after a compaction. */
const notes = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "keel-compact-")), "notes.md")
fs.writeFileSync(notes, "# Notes\nThe answer is 42.\n")

describe("TokenEstimate", () => {
  it("is the last answer's usage plus about a token per four characters of what came after", () => {
    const history = [Message.user("hello"), answered("hi", 1_000), Message.user("x".repeat(40))]
    // 1,000 input + 5 output, then 40 characters.
    assert.strictEqual(TokenEstimate.ofRequest(history), 1_015)
    // Without usage: every message by size (plus the overhead for system prompt and tools).
    assert.strictEqual(TokenEstimate.ofRequest([Message.user("x".repeat(400))], 100), 200)
    // Images count a flat 2,000 tokens.
    const image = new Message.ImageBlock({ source: { type: "base64", media_type: "image/png", data: "A".repeat(100_000) } })
    assert.strictEqual(TokenEstimate.ofMessage(Message.user([image])), 2_000)
  })

  it.effect("the window is the model's own unless set: 200K, or 1M for a [1m] model", () =>
    Effect.gen(function*() {
      assert.strictEqual(TokenEstimate.windowFor("claude-sonnet-4-6"), 200_000)
      assert.strictEqual(TokenEstimate.windowFor("claude-sonnet-4-6[1m]"), 1_000_000)
      const auto = yield* Autocompact.make()
      // 200,000 − min(32,000, 20,000) − 13,000 = 167,000 for a 200K model.
      const history = [Message.user("a"), answered("b", 166_995), Message.user("x")]
      const ctx = { iteration: 1, sessionId: "w", maxTokens: 32_000 }
      assert.strictEqual(auto.stage.announce?.(history, { ...ctx, model: "claude-sonnet-4-6" }), "compacting")
      assert.strictEqual(auto.stage.announce?.(history, { ...ctx, model: "claude-sonnet-4-6[1m]" }), undefined)
    }).pipe(Effect.provide(Layer.merge(TestModel.layer([]), NodeContext.layer))))

  it("counts tool calls and results, cached per message", () => {
    const call = TestModel.message([TestModel.toolUse("Read", { file_path: "/a" }, "t1")])
    const result = Message.user([new Message.ToolResultBlock({ tool_use_id: "t1", content: "y".repeat(4_000) })])
    assert.strictEqual(TokenEstimate.ofMessage(result), 1_000)
    assert.strictEqual(TokenEstimate.ofMessage(call), Math.ceil(("Read" + JSON.stringify({ file_path: "/a" })).length / 4))
    assert.strictEqual(TokenEstimate.ofMessage(result), TokenEstimate.ofMessage(result))
  })
})

describe("Autocompact", () => {
  it.scoped("fires exactly at the threshold: one token below, the request goes out as it is", () =>
    Effect.gen(function*() {
      // 25,995 from the last answer's usage (input + output) + 4 tokens of prompt = 25,999 < 26,000.
      const session = yield* Session.make({ ...options, history: [Message.user("a"), answered("b", THRESHOLD - 10)] })
      yield* collect(session.submit("x".repeat(16)))
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [false])
    }).pipe(Effect.provide(layerFor([TestModel.text("ok")]))))

  it.scoped("fires exactly at the threshold: at it, the summary request goes first (background), then the compacted request", () =>
    Effect.gen(function*() {
      // 25,995 + 5 tokens of prompt = 26,000.
      const session = yield* Session.make({ ...options, history: [Message.user("a"), answered("b", THRESHOLD - 10)] })
      const messages = yield* collect(session.submit("x".repeat(20)))
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [true, false])
      assert.strictEqual(sent[0]!.source, "background")
      assert.deepStrictEqual(kinds(messages), [
        "system/init",
        "system/status:compacting",
        "system/status:null",
        "system/compact_boundary",
        "assistant",
        "system/informational",
        "result"
      ])
      assert.strictEqual((messages[2] as SdkMessage.Status).compact_result, "success")
      const boundary = messages[3] as SdkMessage.CompactBoundary
      assert.strictEqual(boundary.compact_metadata.trigger, "auto")
      assert.strictEqual(boundary.compact_metadata.pre_tokens, THRESHOLD)
      assert.isBelow(boundary.compact_metadata.post_tokens, 200)
    }).pipe(Effect.provide(layerFor([TestModel.text("SUMMARY: earlier work"), TestModel.text("ok")]))))

  it.scoped("the compacted request carries the summary, the recently read files re-read, and the last turn", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ ...options, history: [] })
      // Turn 1 reads the file; its answer reports a context near the threshold.
      yield* collect(session.submit("read the notes"))
      // Turn 2: over the threshold, so compacted first.
      yield* collect(session.submit("what is the answer?"))
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [false, false, true, false])
      const compacted = sent[3]!.messages
      assert.strictEqual(compacted.length, 1)
      const text = textOf(compacted[0]!)
      assert.include(text, JSON.stringify(SummaryPrompt.continuation("SUMMARY-1: the user wants things done.")).slice(1, -1))
      assert.notInclude(text, "<summary>")
      assert.include(text, `${notes}, read before the compaction, as it is on disk now`)
      assert.include(text, "The answer is 42.")
      assert.include(text, "what is the answer?")
      assert.deepStrictEqual(Invariants.requestViolations(compacted), [])
      // The summary request saw the whole history, ending with the summary instructions.
      assert.include(textOf(sent[2]!.messages.at(-1)!), SummaryPrompt.HEADING)
      assert.strictEqual(sent[2]!.messages.length, 5)
    }).pipe(Effect.provide(layerFor(withSummaries((n) =>
      n === 1
        ? TestModel.reply([TestModel.toolUse("Read", { file_path: notes })])
        : TestModel.text("ok", { usage: { input_tokens: THRESHOLD, output_tokens: 5 } })
    )))))

  it.scoped("a summary request that is itself too long drops its oldest turns and tries again", () =>
    Effect.gen(function*() {
      const history = [
        Message.user("turn one"),
        answered("one", 100),
        Message.user("turn two"),
        answered("two", 200),
        Message.user("turn three"),
        answered("three", THRESHOLD)
      ]
      const session = yield* Session.make({ ...options, history })
      const messages = yield* collect(session.submit("turn four"))
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [true, true, false])
      // The second summary request starts at turn two.
      assert.strictEqual(textOf(sent[1]!.messages[0]!), JSON.stringify("turn two"))
      assert.strictEqual((messages.at(-1) as SdkMessage.Result).is_error, false)
    }).pipe(Effect.provide(layerFor([
      TestModel.fail(new ModelError.PromptTooLong({ message: "prompt is too long", status: 400 })),
      TestModel.text("SUMMARY"),
      TestModel.text("ok")
    ]))))
})

describe("Reactive compaction", () => {
  it.scoped("PromptTooLong from the API: compact hard, then the request is made once more", () =>
    Effect.gen(function*() {
      const history = [Message.user("turn one"), answered("one", 100)]
      const session = yield* Session.make({ ...options, history })
      const messages = yield* collect(session.submit("turn two"))
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [false, true, false])
      assert.include(textOf(sent[2]!.messages[0]!), "SUMMARY-R")
      assert.deepStrictEqual(kinds(messages), [
        "system/init",
        "system/status:compacting",
        "system/status:null",
        "system/compact_boundary",
        "assistant",
        "system/informational",
        "result"
      ])
      assert.strictEqual((messages.at(-1) as SdkMessage.Result).result, "fits now")
    }).pipe(Effect.provide(layerFor([
      TestModel.fail(new ModelError.PromptTooLong({ message: "prompt is too long: 210000 tokens > 200000", status: 400 })),
      TestModel.text("SUMMARY-R"),
      TestModel.text("fits now")
    ]))))

  it.scoped("the breaker stops a conversation whose irreducible part exceeds the window: bounded requests, then prompt_too_long", () =>
    Effect.gen(function*() {
      // One prompt larger than the window: nothing can be summarised away, and the API refuses everything.
      const session = yield* Session.make({ ...options, history: [] })
      const results: Array<SdkMessage.Result> = []
      for (let i = 0; i < 4; i++) {
        const messages = yield* collect(session.submit(`${i}`.repeat(4 * (WINDOW + 1))))
        results.push(messages.at(-1) as SdkMessage.Result)
      }
      assert.deepStrictEqual(results.map((r) => r.terminal_reason), Array(4).fill("prompt_too_long"))
      assert.include(results[0]!.result!, "run /clear or start a new session")
      assert.include(results[3]!.result!, "Compaction failed 3 times in a row")
      // Turn 1: summary (fails), the request (PromptTooLong), the reactive summary (fails). Turn 2: its
      // summary fails, and again without turn 1 (the oldest turn dropped): the third failed
      // compaction trips the breaker. Turns 3 and 4: no request at all.
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [true, false, true, true, true])
    }).pipe(Effect.provide(layerFor(
      Array.from({ length: 10 }, () =>
        TestModel.fail(new ModelError.PromptTooLong({ message: "prompt is too long", status: 400 })))
    ))))

  it.scoped("the breaker stops a context that refills to the threshold within 3 calls of each compaction, 3 times", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ ...options, maxTurns: 50, history: [Message.user("start"), answered("ok", THRESHOLD)] })
      const messages = yield* collect(session.submit("keep reading"))
      const result = messages.at(-1) as SdkMessage.Result
      assert.strictEqual(result.terminal_reason, "prompt_too_long")
      assert.include(result.result!, "refilled")
      // Calls 1–3 each compact (summary + request); call 4 finds the third rapid refill and stops.
      const sent = yield* requests
      assert.deepStrictEqual(sent.map(isSummary), [true, false, true, false, true, false])
      // One long turn is summarised whole; its last tool round is kept verbatim after the summary.
      const compacted = sent[3]!.messages
      assert.deepStrictEqual(compacted.map((m) => m.role), ["user", "assistant", "user"])
      const lastCall = (sent[2]!.messages.at(-2) as Message.AssistantMessage).toolUses[0]!
      assert.deepStrictEqual((compacted[1] as Message.AssistantMessage).toolUses, [lastCall])
      const results = compacted[2]!.content as ReadonlyArray<Message.ContentBlock>
      assert.deepStrictEqual(results.map((b) => b instanceof Message.ToolResultBlock ? b.tool_use_id : b.type), [lastCall.id])
      assert.notInclude(textOf(compacted[0]!), SummaryPrompt.RESUME)
    }).pipe(Effect.provide(layerFor(withSummaries(() =>
      TestModel.reply([TestModel.toolUse("Read", { file_path: "/dev/null" })], {
        usage: { input_tokens: THRESHOLD, output_tokens: 5 }
      })
    )))))
})

describe("max_output_tokens recovery", () => {
  const cut = (text: string) => TestModel.text(text, { stopReason: "max_tokens" })

  it.scoped("an answer cut by max_tokens is continued with a resume message, and completes", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ ...options, history: [] })
      const messages = yield* collect(session.submit("write a lot"))
      const sent = yield* requests
      assert.strictEqual(sent.length, 2)
      assert.strictEqual(textOf(sent[1]!.messages.at(-1)!), JSON.stringify(TurnLoop.RESUME_PROMPT))
      const synthetic = messages.find((m) => m.type === "user") as SdkMessage.User
      assert.isTrue(synthetic.isSynthetic)
      assert.strictEqual((messages.at(-1) as SdkMessage.Result).result, "the end")
    }).pipe(Effect.provide(layerFor([cut("part one"), TestModel.text("the end")]))))

  it.scoped("after 3 continuations still cut: terminal reason model_error (the SDK has no max_output_tokens reason)", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ ...options, history: [] })
      const result = (yield* collect(session.submit("write a lot"))).at(-1) as SdkMessage.Result
      assert.strictEqual((yield* requests).length, 4)
      assert.deepStrictEqual([result.terminal_reason, result.is_error], ["model_error", true])
      assert.include(result.result!, "4 times in a row")
    }).pipe(Effect.provide(layerFor([cut("1"), cut("2"), cut("3"), cut("4"), TestModel.text("never")]))))
})

describe("Compaction keeps the invariants (property)", () => {
  it.effect("every tool_use keeps its tool_result, thinking keeps its signature, the request ends with the user", () =>
    Effect.gen(function*() {
      const auto = yield* Autocompact.make({ window: 8_000 })
      const samples = FastCheck.sample(Conversations.shapes, { numRuns: 150, seed: 7 })
      let compacted = 0
      for (const shape of samples) {
        const messages = Conversations.build(shape)
        for (const keepTurns of [1, 3]) {
          const outcome = yield* auto.compact(messages, { model: "m", iteration: 1, sessionId: "p", maxTokens: 1_000 }, {
            trigger: "auto",
            keepTurns
          })
          if (outcome._tag !== "Compacted") continue
          compacted++
          assert.deepStrictEqual(Invariants.requestViolations(outcome.messages), [], JSON.stringify(shape))
          assert.isBelow(outcome.compaction.postTokens, outcome.compaction.preTokens)
          // Kept assistant messages are the originals' content, thinking signatures included.
          for (const m of outcome.messages.slice(1)) {
            if (!(m instanceof Message.AssistantMessage)) continue
            const original = messages.find((o) => o instanceof Message.AssistantMessage && o.id === m.id)
            assert.deepStrictEqual(m.content, (original as Message.AssistantMessage).content)
          }
        }
      }
      assert.isAbove(compacted, 100)
    }).pipe(Effect.provide(Layer.merge(
      TestModel.layer(Array.from({ length: 400 }, () => TestModel.text("SUMMARY"))),
      NodeContext.layer
    ))))
})

describe("/compact", () => {
  it.scoped("summarises the whole conversation with the user's instructions: status, boundary (manual), result", () =>
    Effect.gen(function*() {
      const history = [Message.user("turn one"), answered("one", 100), Message.user("turn two"), answered("two", 200)]
      const session = yield* Session.make({ ...options, history })
      const messages = yield* collect(session.submit("/compact focus on the API"))
      assert.deepStrictEqual(kinds(messages), [
        "system/init",
        "system/status:compacting",
        "system/status:null",
        "system/compact_boundary",
        "result"
      ])
      const boundary = messages[3] as SdkMessage.CompactBoundary
      assert.strictEqual(boundary.compact_metadata.trigger, "manual")
      const result = messages[4] as SdkMessage.Result
      assert.deepStrictEqual([result.is_error, result.num_turns], [false, 0])
      const sent = yield* requests
      assert.include(textOf(sent[0]!.messages.at(-1)!), "The user added these instructions for the summary:\\nfocus on the API")
      // The history is the summary alone, waiting for the next prompt (no "continue" instruction).
      const transcript = (yield* messagesOf(session))
      assert.strictEqual(transcript.length, 1)
      assert.include(textOf(transcript[0]!), "SUMMARY-M")
      assert.notInclude(textOf(transcript[0]!), SummaryPrompt.RESUME)
      yield* collect(session.submit("next"))
      const next = (yield* requests)[1]!
      assert.deepStrictEqual(Invariants.requestViolations(next.messages), [])
      assert.strictEqual(next.messages.length, 2)
    }).pipe(Effect.provide(layerFor([TestModel.text("SUMMARY-M"), TestModel.text("ok")]))))

  it.scoped("a summary answer that calls a tool anyway: its text is the summary, and no tool runs", () =>
    Effect.gen(function*() {
      const history = [Message.user("turn one"), answered("one", 100)]
      const session = yield* Session.make({ ...options, history })
      const result = (yield* collect(session.submit("/compact"))).at(-1) as SdkMessage.Result
      assert.isFalse(result.is_error, result.result)
      assert.strictEqual((yield* requests).length, 1)
      const transcript = yield* messagesOf(session)
      assert.strictEqual(transcript.length, 1)
      assert.strictEqual(textOf(transcript[0]!), JSON.stringify([{ type: "text", text: SummaryPrompt.continuation("SUMMARY-T") }]))
    }).pipe(Effect.provide(layerFor([
      TestModel.reply([new Message.TextBlock({ text: "<summary>SUMMARY-T</summary>" }), TestModel.toolUse("Write", { file_path: "x" })])
    ]))))

  it.scoped("without a compactor it says so, and the conversation is unchanged", () =>
    Effect.gen(function*() {
      const history = [Message.user("one"), answered("one", 100)]
      const session = yield* Session.make({ ...options, history })
      const result = (yield* collect(session.submit("/compact"))).at(-1) as SdkMessage.Result
      assert.deepStrictEqual([result.is_error, result.result], [true, "Compaction is not available in this session"])
      assert.strictEqual((yield* messagesOf(session)).length, 2)
    }).pipe(Effect.provide(Layer.mergeAll(
      TestModel.layer([]),
      Pipeline.layerEmpty,
      Compactor.layerNone,
      sessionServices
    ))))
})
