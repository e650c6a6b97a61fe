import { assert, describe, it } from "@effect/vitest"
import { Invariants, Message } from "@keel/core"

const use = (id: string) => new Message.ToolUseBlock({ id, name: "Read", input: {} })
const result = (id: string) => new Message.ToolResultBlock({ tool_use_id: id, content: "ok" })
const assistant = (...content: Array<Message.ContentBlock>) => new Message.AssistantMessage({ content })

describe("Invariants", () => {
  it("accepts a valid tool round trip, and a transcript that ends with the assistant", () => {
    const messages = [Message.user("hi"), assistant(use("a"), use("b")), Message.user([result("a"), result("b")]), assistant(Message.text("done"))]
    assert.deepStrictEqual(Invariants.violations(messages), [])
    assert.deepStrictEqual(Invariants.requestViolations(messages.slice(0, 3)), [])
  })

  it("names each broken rule", () => {
    assert.deepStrictEqual(Invariants.violations([]), ["the conversation is empty"])
    assert.deepStrictEqual(Invariants.violations([assistant(Message.text("x"))]), [
      "the conversation must start with a user message"
    ])
    assert.deepStrictEqual(
      Invariants.violations([Message.user("hi"), assistant(use("a"), use("b")), Message.user([result("a")])]),
      ["message 1: tool_use b unanswered"]
    )
    assert.deepStrictEqual(Invariants.violations([Message.user("hi"), assistant(use("a")), Message.user("no results")]), [
      "message 1: tool_use a unanswered"
    ])
    assert.deepStrictEqual(Invariants.violations([Message.user([result("z")])]), [
      "message 0: tool_result z answers no tool_use of the previous message"
    ])
    assert.deepStrictEqual(
      Invariants.violations([
        Message.user("hi"),
        assistant(new Message.ThinkingBlock({ thinking: "t", signature: "" }), Message.text("answer"))
      ]),
      ["message 1: thinking block without signature"]
    )
    assert.deepStrictEqual(
      Invariants.violations([Message.user("hi"), assistant(Message.text("a"), new Message.ThinkingBlock({ thinking: "t", signature: "s" }))]),
      ["message 1: a thinking block is the last block"]
    )
    assert.deepStrictEqual(Invariants.requestViolations([Message.user("hi"), assistant(Message.text("x"))]), [
      "the conversation must end with a user message"
    ])
  })
})
