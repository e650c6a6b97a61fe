/**
 * Structured output in a session: the model answers through the `StructuredOutput` tool (whose input
 * schema is the output schema); the turn ends on the first accepted call with `structured_output`
 * on the result, a refused call is retried with the validation error in its tool result, an answer
 * without the call is retried after a reminder, and after the attempt budget the turn ends with
 * `error_max_structured_output_retries`. The scripted model dies on a request past its script, so
 * every test also proves the exact number of model calls.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Invariants,
  Message,
  OutputSchema,
  Session,
  SessionStore,
  StructuredOutput,
  StructuredOutputTool,
  TestModel
} from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Cause, Effect, Exit, Layer } from "effect"
import { sleeper } from "../support/Tools.js"
import { collect, kinds, layerFor, messagesOf, resultOf } from "../support/Sessions.js"

const SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: { answer: { type: "number" } },
  required: ["answer"],
  additionalProperties: false
}

const options = { model: "claude-sonnet-4-6", cwd: "/work" } as const

/** Replies on the session's (priced) model, so no warning about an unknown price joins the output. */
const sonnet = { model: "claude-sonnet-4-6" } as const

const answer = (input: unknown, id: string, text?: string) =>
  TestModel.reply([
    ...(text !== undefined ? [Message.text(text)] : []),
    TestModel.toolUse(StructuredOutputTool.NAME, input, id)
  ], sonnet)

/** A session with the output schema over `script`, and the scripted model's requests. */
const run = (script: ReadonlyArray<TestModel.ScriptItem>, prompt = "what is the answer?", maxAttempts?: number) =>
  Effect.gen(function*() {
    const schema = yield* OutputSchema.make(SCHEMA, "test")
    const files = SessionStore.memoryFiles()
    const context = yield* Layer.build(layerFor(script, [sleeper, StructuredOutputTool.make(schema)], {
      store: Layer.succeed(SessionStore.SessionStore, SessionStore.make({ home: "/keel", files }))
    }))
    const session = yield* Effect.provide(Session.make({ ...options, structuredOutput: { schema, maxAttempts } }), context)
    const messages = yield* collect(session.submit(prompt))
    const requests = yield* Effect.provide(Effect.flatMap(TestModel.TestModel, (m) => m.requests), context)
    const conversation = yield* messagesOf(session)
    const lines = new TextDecoder().decode(
      (yield* files.read(`/keel/projects/${SessionStore.slug("/work")}/${yield* session.sessionId}.jsonl`)).pipe((o) =>
        o._tag === "Some" ? o.value : new Uint8Array()
      )
    ).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    return { messages, requests, conversation, lines, result: resultOf(messages) }
  })

/** The tool results of the user message at `index` of `messages`, as sent. */
const toolResults = (messages: ReadonlyArray<SdkMessage.SdkMessage>, index: number) =>
  (messages[index] as SdkMessage.User).message.content as unknown as ReadonlyArray<Record<string, unknown>>

const mismatch = (problems: string) =>
  `<tool_use_error>The input does not match the required schema: ${problems}. ` +
  "Call StructuredOutput again with input that matches it.</tool_use_error>"

describe("structured output", () => {
  it.scoped("valid the first time: one model call; the result carries structured_output and its JSON as result", () =>
    Effect.gen(function*() {
      const { conversation, lines, messages, requests, result } = yield* run([answer({ answer: 42 }, "so-1", "Here it is.")])
      assert.strictEqual(requests.length, 1)
      // The tool's input schema is the output schema, as given.
      const tool = requests[0]!.tools!.find((t) => t.name === "StructuredOutput")!
      assert.deepStrictEqual(tool.input_schema, SCHEMA)
      assert.include((messages[0] as SdkMessage.SystemInit).tools, "StructuredOutput")
      assert.deepStrictEqual(kinds(messages), ["system/init", "assistant", "user", "result"])
      assert.deepStrictEqual(toolResults(messages, 2), [{
        type: "tool_result",
        tool_use_id: "so-1",
        content: StructuredOutputTool.ACCEPTED
      }])
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.is_error, false)
      assert.deepStrictEqual(result.structured_output, { answer: 42 })
      assert.strictEqual(result.result, `{"answer":42}`)
      assert.strictEqual(result.terminal_reason, "completed")
      assert.strictEqual(result.num_turns, 1)
      assert.deepStrictEqual(Invariants.violations(conversation), [])
      // The turn's envelope records the schema the answer had to match.
      assert.deepStrictEqual(lines.filter((e) => e.type === "envelope").map((e) => e.outputSchema), [SCHEMA])
    }))

  it.scoped("invalid, then valid after one retry: the mismatch goes back to the model in the tool result; two model calls", () =>
    Effect.gen(function*() {
      const { messages, requests, result } = yield* run([
        answer({ answer: "forty-two", extra: 1 }, "so-1"),
        answer({ answer: 42 }, "so-2")
      ])
      assert.strictEqual(requests.length, 2)
      const refused = {
        type: "tool_result",
        tool_use_id: "so-1",
        content: mismatch("root: must NOT have additional properties, /answer: must be number"),
        is_error: true
      }
      assert.deepStrictEqual(toolResults(messages, 2), [refused])
      // The second request ends with that result: the model reads what was wrong.
      const last = requests[1]!.messages.at(-1) as Message.UserMessage
      assert.deepStrictEqual(last.toolResults.map((r) => [r.tool_use_id, r.content, r.is_error]), [
        ["so-1", refused.content, true]
      ])
      assert.strictEqual(result.subtype, "success")
      assert.deepStrictEqual(result.structured_output, { answer: 42 })
      assert.strictEqual(result.num_turns, 2)
    }))

  it.scoped("exhausted: five refused answers, exactly five model calls, then error_max_structured_output_retries naming the last mismatch", () =>
    Effect.gen(function*() {
      const script = [1, 2, 3, 4, 5].map((n) => answer({ answer: `bad ${n}` }, `so-${n}`))
      const { conversation, messages, requests, result } = yield* run(script)
      assert.strictEqual(requests.length, StructuredOutput.MAX_ATTEMPTS)
      assert.strictEqual(result.subtype, "error_max_structured_output_retries")
      assert.strictEqual(result.is_error, true)
      assert.strictEqual(result.terminal_reason, "structured_output_retry_exhausted")
      assert.deepStrictEqual(result.errors, [
        "No valid structured output after 5 attempts; the last StructuredOutput call did not match the schema: /answer: must be number"
      ])
      assert.isUndefined(result.structured_output)
      assert.strictEqual(result.num_turns, 5)
      // Every call has its result: the conversation goes on validly.
      assert.deepStrictEqual(Invariants.violations(conversation), [])
      assert.strictEqual(messages.filter((m) => m.type === "user").length, 5)
    }))

  it.scoped("an answer without the call: a synthetic reminder, then the call; two model calls", () =>
    Effect.gen(function*() {
      const { messages, requests, result } = yield* run([TestModel.text("It is 42.", sonnet), answer({ answer: 42 }, "so-1")])
      assert.strictEqual(requests.length, 2)
      assert.deepStrictEqual(kinds(messages), ["system/init", "assistant", "user", "assistant", "user", "result"])
      const reminder = messages[2] as SdkMessage.User
      assert.strictEqual(reminder.isSynthetic, true)
      assert.deepStrictEqual(reminder.message, { role: "user", content: StructuredOutput.REMINDER })
      const last = requests[1]!.messages.at(-1) as Message.UserMessage
      assert.strictEqual(last.content, StructuredOutput.REMINDER)
      assert.deepStrictEqual(result.structured_output, { answer: 42 })
    }))

  it.scoped("answers without the call count against the budget too (maxAttempts 2): two model calls, then exhausted", () =>
    Effect.gen(function*() {
      const { requests, result } = yield* run([TestModel.text("42", sonnet), TestModel.text("really, 42", sonnet)], "q", 2)
      assert.strictEqual(requests.length, 2)
      assert.strictEqual(result.subtype, "error_max_structured_output_retries")
      assert.deepStrictEqual(result.errors, [
        "No valid structured output after 2 attempts: the answers did not call StructuredOutput"
      ])
    }))

  it.scoped("work before the answer does not count; a call beside other calls ends the turn once all of them are answered", () =>
    Effect.gen(function*() {
      const { conversation, messages, requests, result } = yield* run([
        TestModel.reply([TestModel.toolUse("Sleep", { ms: 0 }, "t-1")], sonnet),
        answer({ answer: "x" }, "so-1"),
        TestModel.reply([TestModel.toolUse("Sleep", { ms: 0 }, "t-2"), TestModel.toolUse("StructuredOutput", { answer: 7 }, "so-2")], sonnet)
      ], "q", 1 + 1)
      assert.strictEqual(requests.length, 3)
      assert.deepStrictEqual(result.structured_output, { answer: 7 })
      // One user message per result, as Claude Code sends them.
      assert.deepStrictEqual(
        [...toolResults(messages, messages.length - 3), ...toolResults(messages, messages.length - 2)].map((r) => r.tool_use_id),
        ["t-2", "so-2"]
      )
      assert.deepStrictEqual(Invariants.violations(conversation), [])
    }))

  it.scoped("a session asking for structured output without the tool in its registry is a defect, named", () =>
    Effect.gen(function*() {
      const schema = yield* OutputSchema.make(SCHEMA, "test")
      const exit = yield* Effect.exit(Session.make({ ...options, structuredOutput: { schema } }).pipe(
        Effect.provide(layerFor([], [sleeper]))
      ))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        assert.include(Cause.pretty(exit.cause), "structuredOutput needs the StructuredOutput tool for its schema in the ToolRegistry")
      }
    }))
})

describe("StructuredOutput policy", () => {
  const policy = (maxAttempts: number) =>
    Effect.map(OutputSchema.make(SCHEMA, "test"), (schema) => StructuredOutput.policy({ schema, maxAttempts }))

  it.effect("roundOf: the last accepted call's input; else the schema's complaint about the last refused one; nothing without a call", () =>
    Effect.gen(function*() {
      const p = yield* policy(3)
      const uses = [
        TestModel.toolUse("StructuredOutput", { answer: 1 }, "a"),
        TestModel.toolUse("Sleep", {}, "s"),
        TestModel.toolUse("StructuredOutput", { answer: "no" }, "b")
      ]
      const results = (errors: ReadonlyArray<string>) =>
        new Message.UserMessage({
          content: ["a", "s", "b"].map((id) =>
            new Message.ToolResultBlock({ tool_use_id: id, content: "x", is_error: errors.includes(id) ? true : undefined })
          )
        })
      assert.deepStrictEqual(StructuredOutput.roundOf(p, uses, results(["b"])), { _tag: "Provided", value: { answer: 1 } })
      assert.deepStrictEqual(StructuredOutput.roundOf(p, uses, results(["a", "b"])), {
        _tag: "Refused",
        error: "/answer: must be number"
      })
      assert.isUndefined(StructuredOutput.roundOf(p, [uses[1]!], results([])))
    }))

  it.effect("afterTools and afterPlainAnswer count attempts up to the budget", () =>
    Effect.gen(function*() {
      const p = yield* policy(2)
      const first = StructuredOutput.afterTools(p, StructuredOutput.initial, { _tag: "Refused", error: "e1" })
      assert.deepStrictEqual(first, { _tag: "Retry", progress: { attempts: 1, lastError: "e1" }, reminder: undefined })
      const second = StructuredOutput.afterPlainAnswer(p, { attempts: 1, lastError: "e1" })
      assert.deepStrictEqual(second, {
        _tag: "Exhausted",
        progress: { attempts: 2, lastError: "e1" },
        message: "No valid structured output after 2 attempts; the last StructuredOutput call did not match the schema: e1"
      })
      assert.deepStrictEqual(StructuredOutput.afterPlainAnswer(p, StructuredOutput.initial), {
        _tag: "Retry",
        progress: { attempts: 1, lastError: undefined },
        reminder: StructuredOutput.REMINDER
      })
      assert.isUndefined(StructuredOutput.afterTools(p, StructuredOutput.initial, undefined))
    }))
})
