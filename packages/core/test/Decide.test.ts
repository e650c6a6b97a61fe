/**
 * The turn loop's decisions as a pure function of (state, outcome): every transition, with Claude
 * Code's policies and with others, without running a turn.
 */
import { assert, describe, it } from "@effect/vitest"
import { Decide, LoopState, Message, ModelError, TestModel, TurnPolicy } from "@keel/core"

const context: Decide.Context = { policy: TurnPolicy.claudeCode, maxTokens: 1000, canCompact: true }

/** The state during iteration `n` (calls made so far). */
const at = (n: number, overrides: Partial<LoopState.LoopState> = {}): LoopState.LoopState => ({
  ...LoopState.initial("claude-primary"),
  iteration: n,
  ...overrides
})

const answer = (options: { tools?: number; stop?: Message.StopReason } = {}) =>
  TestModel.message(
    options.tools === undefined || options.tools === 0
      ? [new Message.TextBlock({ text: "an answer" })]
      : Array.from({ length: options.tools }, (_, i) => TestModel.toolUse("Read", { file_path: `/f${i}` }, `t${i}`)),
    options.stop === undefined ? {} : { stopReason: options.stop }
  )

const answered = (message: Message.AssistantMessage, spent?: string, model = "claude-primary") =>
  Decide.Outcome.Answered({ message, model, spent })

const overloaded = new ModelError.Overloaded({ message: "Overloaded", status: 529 })
const tooLong = new ModelError.PromptTooLong({ message: "prompt is too long: 250000 tokens > 200000 maximum", status: 400 })

describe("Decide", () => {
  it("an answer without tool calls completes the turn; the answer is the last message", () => {
    const message = answer()
    const { next, state } = Decide.decide(at(1), answered(message), context)
    assert.strictEqual(next._tag, "Stop")
    assert.deepStrictEqual(state.stop, { reason: "completed" })
    assert.strictEqual(state.lastMessage, message)
  })

  it("an answer with tool calls runs them; the turn goes on", () => {
    const { next, state } = Decide.decide(at(1), answered(answer({ tools: 2 })), context)
    assert.strictEqual(next._tag, "RunTools")
    assert.strictEqual(state.stop, undefined)
  })

  it("the model an answer came from (a fallback) is the model of the rest of the turn", () => {
    const { state } = Decide.decide(at(1), answered(answer({ tools: 1 }), undefined, "claude-fallback"), context)
    assert.strictEqual(state.model, "claude-fallback")
  })

  it("a spent budget stops after the answer; its tool calls are answered without running (soft cap)", () => {
    const withCalls = Decide.decide(at(1), answered(answer({ tools: 1 }), "Reached maximum budget ($1)"), context)
    assert.deepStrictEqual(withCalls.next, Decide.Next.AnswerUnrun({ message: "Reached maximum budget ($1)" }))
    assert.deepStrictEqual(withCalls.state.stop, { reason: "budget_exhausted", message: "Reached maximum budget ($1)" })
    const without = Decide.decide(at(1), answered(answer(), "Reached maximum budget ($1)"), context)
    assert.strictEqual(without.next._tag, "Stop")
    assert.strictEqual(without.state.stop?.reason, "budget_exhausted")
  })

  it("an answer cut at max_tokens is continued up to 3 times with Claude Code's prompt, then the turn stops", () => {
    let state = at(1)
    for (let i = 1; i <= 3; i++) {
      const decision = Decide.decide(state, answered(answer({ stop: "max_tokens" })), context)
      assert.deepStrictEqual(decision.next, Decide.Next.Continue({ prompt: TurnPolicy.RESUME_PROMPT }))
      assert.strictEqual(decision.state.continuations, i)
      state = LoopState.startIteration(decision.state)
    }
    const last = Decide.decide(state, answered(answer({ stop: "max_tokens" })), context)
    assert.strictEqual(last.next._tag, "Stop")
    assert.deepStrictEqual(last.state.stop, {
      reason: "max_output_tokens",
      message: "The answer was cut at the output limit (1000 tokens) 4 times in a row"
    })
  })

  it("the output limit named is the answering model's own (a fallback's), when the context knows each model's", () => {
    const perModel = { ...context, maxTokensFor: (model: string) => (model === "claude-backup" ? 32_000 : 64_000) }
    const cut = answered(answer({ stop: "max_tokens" }), undefined, "claude-backup")
    assert.deepStrictEqual(Decide.decide(at(1, { continuations: 3 }), cut, perModel).state.stop?.message,
      "The answer was cut at the output limit (32000 tokens) 4 times in a row")
  })

  it("a continuation policy of its own: no continuation at all, or another prompt", () => {
    const never = { ...context, policy: { ...context.policy, continuation: { max: 0, prompt: "" } } }
    assert.strictEqual(Decide.decide(at(1), answered(answer({ stop: "max_tokens" })), never).state.stop?.reason, "max_output_tokens")
    const mine = { ...context, policy: { ...context.policy, continuation: { max: 1, prompt: "Go on." } } }
    assert.deepStrictEqual(Decide.decide(at(1), answered(answer({ stop: "max_tokens" })), mine).next, Decide.Next.Continue({ prompt: "Go on." }))
  })

  it("a continuation on the last allowed call still goes into the conversation, then the turn stops at max_turns", () => {
    const limited = { ...context, policy: { ...context.policy, maxTurns: 2 } }
    const { next, state } = Decide.decide(at(2), answered(answer({ stop: "max_tokens" })), limited)
    assert.strictEqual(next._tag, "Continue")
    assert.deepStrictEqual(state.stop, { reason: "max_turns" })
  })

  it("after the tools: another call, or max_turns once the calls are spent, or the budget", () => {
    const limited = { ...context, policy: { ...context.policy, maxTurns: 2 } }
    assert.strictEqual(Decide.decide(at(1), Decide.Outcome.ToolsAnswered({ spent: undefined }), limited).next._tag, "CallModel")
    const spentCalls = Decide.decide(at(2), Decide.Outcome.ToolsAnswered({ spent: undefined }), limited)
    assert.deepStrictEqual([spentCalls.next._tag, spentCalls.state.stop], ["Stop", { reason: "max_turns" }])
    const spentMoney = Decide.decide(at(1), Decide.Outcome.ToolsAnswered({ spent: "Reached maximum budget ($2)" }), limited)
    assert.deepStrictEqual(spentMoney.state.stop, { reason: "budget_exhausted", message: "Reached maximum budget ($2)" })
  })

  it("a failed call ends the turn with model_error, on the model it ended on", () => {
    const { next, state } = Decide.decide(at(1), Decide.Outcome.ModelFailed({ error: overloaded, model: "claude-fallback" }), context)
    assert.strictEqual(next._tag, "Stop")
    assert.deepStrictEqual(state.stop, { reason: "model_error", error: overloaded })
    assert.strictEqual(state.model, "claude-fallback")
  })

  it("a prompt that is too long is compacted once; a second time since the last answer ends the turn", () => {
    const first = Decide.decide(at(1), Decide.Outcome.ModelFailed({ error: tooLong, model: "claude-primary" }), context)
    assert.strictEqual(first.next._tag, "Compact")
    assert.strictEqual(first.state.compactions, 1)
    const compacted = Decide.decide(first.state, Decide.Outcome.Compacted(), context)
    assert.strictEqual(compacted.next._tag, "CallModel")
    const again = Decide.decide(LoopState.startIteration(compacted.state), Decide.Outcome.ModelFailed({ error: tooLong, model: "claude-primary" }), context)
    assert.deepStrictEqual(again.state.stop, { reason: "prompt_too_long", error: tooLong })
  })

  it("a successful answer makes reactive compaction available again", () => {
    const { state } = Decide.decide(at(3, { compactions: 1 }), answered(answer({ tools: 1 })), context)
    assert.strictEqual(state.compactions, 0)
    assert.strictEqual(Decide.decide(state, Decide.Outcome.ModelFailed({ error: tooLong, model: "m" }), context).next._tag, "Compact")
  })

  it("without a compactor, or with a policy of no compaction, a prompt that is too long ends the turn at once", () => {
    const failed = Decide.Outcome.ModelFailed({ error: tooLong, model: "claude-primary" })
    assert.strictEqual(Decide.decide(at(1), failed, { ...context, canCompact: false }).state.stop?.reason, "prompt_too_long")
    const none = { ...context, policy: { ...context.policy, promptTooLong: { compactions: 0 } } }
    assert.strictEqual(Decide.decide(at(1), failed, none).state.stop?.reason, "prompt_too_long")
  })

  it("a failed compaction and a stage's breaker end the turn with prompt_too_long and say why", () => {
    const failed = Decide.decide(at(1), Decide.Outcome.CompactionFailed({ error: tooLong, message: "breaker open" }), context)
    assert.deepStrictEqual(failed.state.stop, { reason: "prompt_too_long", error: tooLong, message: "breaker open" })
    const halted = Decide.decide(at(1), Decide.Outcome.Halted({ message: "3 compactions failed in a row" }), context)
    assert.deepStrictEqual(halted.state.stop, { reason: "prompt_too_long", message: "3 compactions failed in a row" })
  })

  it("the first reason to stop wins; an interruption names the phase it came in", () => {
    const stopped = LoopState.stopped(at(1), { reason: "max_turns" })
    assert.deepStrictEqual(LoopState.stopped(stopped, { reason: "completed" }).stop, { reason: "max_turns" })
    assert.strictEqual(LoopState.interruptedReason(at(1)), "aborted_streaming")
    assert.strictEqual(LoopState.interruptedReason(LoopState.runningTools(at(1), { uses: [], finished: new Map() })), "aborted_tools")
  })

  it("is pure: the same state and outcome decide the same, and the state given is not changed", () => {
    const state = at(2, { continuations: 1 })
    const frozen = JSON.stringify(state)
    const outcome = answered(answer({ stop: "max_tokens" }))
    assert.deepStrictEqual(Decide.decide(state, outcome, context), Decide.decide(state, outcome, context))
    assert.strictEqual(JSON.stringify(state), frozen)
  })
})
