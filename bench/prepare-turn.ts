/**
 * Preparing a turn: what the kernel does before each model call, on a short history and on a
 * 10,000-message one, side by side.
 *
 * Table 1, the estimate and autocompact. "One preparation" is `TokenEstimate.ofRequest(messages)`
 * (the estimate the turn loop's `announce` takes) plus the autocompact stage's `run` on the same
 * messages (the estimate again, and the per-session circuit breaker), below the threshold: the stage
 * is `Autocompact.make({ window: 10_000_000 })` over `TestModel.layer([])` and `NodeContext.layer`, so
 * it never compacts. The histories are a prompt followed by (assistant: text + Read tool_use, user: a
 * ~1 KB tool_result) pairs; the 10- and 10,000-message ones end with the model's tool call. Cases:
 *
 * - 10 messages, first call: fresh message objects each time (cold caches), no usage on any answer
 *   (a history resumed from a transcript, or the turns a compaction kept): all 10 messages are sized.
 * - 10,000 messages, first call: the same at 10,000 messages.
 * - 10,000 messages, again: the same objects (warm): 10,000 cached estimates are walked.
 * - + 1 message, answers without usage: a new tool result (fresh each time) after those 10,000: it is
 *   sized, and the 10,000 cached estimates are walked.
 * - + 1 message, the last answer with usage: the same, but the tool call it answers carries the API's
 *   usage, as every answer does in a live session: the new message is sized, then the usage is read.
 *   This is what a call costs in a long session; it should cost about what the 10-message history does.
 * - + 1 message again: the next answer (with usage) and its new tool result.
 *
 * Each figure is the median over KEEL_BENCH_RUNS runs (default 101, after 5 warm-ups) of the mean µs
 * per preparation in a run (a run makes 200 preparations; 20 on 10,001 or more messages, as each needs
 * a copy of the history with its new message; 5 on the warm 10,000; one on the cold 10,000).
 *
 * Table 2, the whole pipeline keel runs (`ContextManagement.layer`: tool result budget, snip,
 * microcompact, context collapse, autocompact; window 10,000,000, so that none of them changes
 * anything), on one call of a live session: every answer carries its usage and reads a new file. In
 * each run the session first prepares the history (untimed, as the call before did), then the model's
 * next answer and its tool result are appended and the call is prepared: that is timed, stage by
 * stage. Median over the runs.
 *
 * Run: npm run bench:prepare   (KEEL_BENCH_RUNS=101 to change)
 */
import { NodeContext } from "@effect/platform-node"
import { Autocompact, ContextManagement, Message, Pipeline, TestModel, TokenEstimate } from "@keel/core"
import { Effect, Layer } from "effect"
import * as os from "node:os"
import * as path from "node:path"

const runs = Number(process.env.KEEL_BENCH_RUNS ?? 101)
const LONG = 10_000
const SHORT = 10
/** Preparations per timed run: enough for a run to take about a millisecond or more. */
const BATCH = 200
const WARM_UPS = 5

/** Built without schema validation: the histories are large, and validation is not what is measured. */
const noCheck = { disableValidation: true } as const

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const resultText = (i: number) =>
  Array.from({ length: 20 }, (_, line) => `${String(line + 1).padStart(6)}\tfile ${i}, line ${line + 1}: some source text`)
    .join("\n")

const usage = (input_tokens: number) => new Message.Usage({ input_tokens, output_tokens: 20 }, noCheck)

/** The model's answer `i`: a line of text and a Read of a file of its own, with `withUsage`'s usage. */
const answerBlocks = (i: number | string): ReadonlyArray<Message.ContentBlock> => [
  new Message.TextBlock({ text: `Reading file ${i}.` }, noCheck),
  new Message.ToolUseBlock({ id: `toolu_${i}`, name: "Read", input: { file_path: `src/f${i}.ts` } }, noCheck)
]
const resultBlocks = (i: number | string): ReadonlyArray<Message.ContentBlock> => [
  new Message.ToolResultBlock({ tool_use_id: `toolu_${i}`, content: resultText(Number(i) || -1) }, noCheck)
]

type Content = ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: ReadonlyArray<Message.ContentBlock> }>

/** The content of a history of `n` messages (shared between copies: estimates are cached per message, not per block). */
const contents = (n: number): Content => {
  const out: Array<Content[number]> = [
    { role: "user", content: [new Message.TextBlock({ text: "read the files one by one and summarise them" }, noCheck)] }
  ]
  for (let i = 0; out.length < n; i++) {
    out.push({ role: "assistant", content: answerBlocks(i) })
    if (out.length < n) out.push({ role: "user", content: resultBlocks(i) })
  }
  return out
}

/** Fresh message objects over `content` (nothing estimated yet); answers carry `answerUsage` when given. */
const fresh = (content: Content, answerUsage?: (i: number) => Message.Usage): Array<Message.Message> =>
  content.map((m, i) =>
    m.role === "user"
      ? new Message.UserMessage({ content: m.content }, noCheck)
      : new Message.AssistantMessage({ content: m.content, ...(answerUsage ? { usage: answerUsage(i) } : {}) }, noCheck)
  )

const answer = (i: number | string, input: number) =>
  new Message.AssistantMessage({ content: answerBlocks(i), usage: usage(input) }, noCheck)
const toolResult = (i: number | string) => new Message.UserMessage({ content: resultBlocks(i) }, noCheck)

/** Prints a table: the first column left-aligned, the others right-aligned. */
const table = (title: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (c: ReadonlyArray<string>) => c.map((s, i) => (i === 0 ? s.padEnd(widths[i]!) : s.padStart(widths[i]!))).join("  ")
  console.log(`\n${title}`)
  console.log(line(header))
  for (const r of rows) console.log(line(r))
}

const count = (n: number) => n.toLocaleString("en-US")

/** Table 1: the estimate and the autocompact stage. */
const estimateAndAutocompact = Effect.gen(function*() {
  const { stage } = yield* Autocompact.make({ window: 10_000_000 })
  const context = { model: "m", iteration: 1, sessionId: "b", maxTokens: 1000 }
  let sink = 0
  const prepare = (messages: ReadonlyArray<Message.Message>) => {
    sink += TokenEstimate.ofRequest(messages)
    sink += Effect.runSync(stage.run(messages, context)).messages.length
  }

  /** µs per preparation: the median over runs of the mean over one run's inputs (made untimed by `inputs`). */
  const measure = (inputs: () => ReadonlyArray<ReadonlyArray<Message.Message>>): number => {
    for (let i = 0; i < WARM_UPS; i++) for (const m of inputs()) prepare(m)
    const perRun: Array<number> = []
    for (let r = 0; r < runs; r++) {
      const batch = inputs()
      const t0 = performance.now()
      for (const m of batch) prepare(m)
      perRun.push(((performance.now() - t0) * 1000) / batch.length)
    }
    return median(perRun)
  }

  const short = contents(SHORT)
  const long = contents(LONG)
  const history = fresh(long)
  const batchOf = <A>(n: number, f: () => A): Array<A> => Array.from({ length: n }, f)
  // The tool call at the end of `history` again, as the API returned it: with its usage.
  const last = history.at(-1) as Message.AssistantMessage
  const answered = [...history.slice(0, -1), new Message.AssistantMessage({ content: last.content, usage: usage(2_500_000) }, noCheck)]
  const answeredAgain = [...answered, toolResult(LONG / 2 - 1), answer("next", 2_500_300)]
  /** Batches of `ms` plus a new tool result answering its last message. */
  const plusOne = (ms: ReadonlyArray<Message.Message>) => () => {
    const id = (ms.at(-1) as Message.AssistantMessage).toolUses[0]!.id.slice("toolu_".length)
    return batchOf(20, () => [...ms, toolResult(id)])
  }

  const rows: Array<[string, number, number]> = [
    [`${SHORT} messages, first call (cold)`, SHORT, measure(() => batchOf(BATCH, () => fresh(short)))],
    [`${count(LONG)} messages, first call (cold)`, LONG, measure(() => [fresh(long)])],
    [`${count(LONG)} messages, again (warm)`, LONG, measure(() => batchOf(5, () => history))],
    ["+ 1 message, answers without usage", LONG + 1, measure(plusOne(history))],
    ["+ 1 message, the last answer with usage", LONG + 1, measure(plusOne(answered))],
    ["+ 1 message again", LONG + 3, measure(plusOne(answeredAgain))]
  ]
  const base = rows[0]![2]
  table(
    "1. TokenEstimate.ofRequest + the autocompact stage's run",
    ["case", "messages", "µs/preparation", `× ${SHORT} messages`],
    rows.map(([name, n, us]) => [name, count(n), us.toFixed(2), (us / base).toFixed(2)])
  )
  return sink
})

/** Table 2: every stage of keel's pipeline, on one call of a live session. */
const wholePipeline = Effect.gen(function*() {
  const { stages } = yield* Pipeline.Pipeline
  const rows: Array<Array<string>> = []
  let base = 0
  for (const n of [SHORT, LONG]) {
    // A live session: every answer carries its usage (growing with the conversation).
    const history = fresh(contents(n + 1), (i) => usage(300 * i))
    /** One call's preparation, stage by stage in the pipeline's order; µs per stage when `times` is given. */
    const prepare = (messages: ReadonlyArray<Message.Message>, sessionId: string, times?: Array<Array<number>>) => {
      const context = { model: "m", iteration: 1, sessionId, maxTokens: 1000 }
      let current = messages
      stages.forEach((stage, s) => {
        const t0 = performance.now()
        const result = Effect.runSync(stage.run(current, context))
        times?.[s]!.push((performance.now() - t0) * 1000)
        if (result.messages !== current || result.halt !== undefined) throw new Error(`${stage.id.name} changed the conversation`)
        current = result.messages
      })
    }
    const times = stages.map(() => [] as Array<number>)
    for (let r = -WARM_UPS; r < runs; r++) {
      const sessionId = `live-${n}`
      prepare(history, sessionId)
      const next = [...history, answer(`new-${r}`, 300 * history.length), toolResult(`new-${r}`)]
      prepare(next, sessionId, r >= 0 ? times : undefined)
    }
    const perStage = times.map(median)
    const total = median(times[0]!.map((_, i) => times.reduce((sum, ts) => sum + ts[i]!, 0)))
    if (n === SHORT) base = total
    rows.push([count(history.length + 2), ...perStage.map((us) => us.toFixed(1)), total.toFixed(1), (total / base).toFixed(2)])
  }
  table(
    "2. Every stage of keel's pipeline (ContextManagement.layer), one call of a live session (µs)",
    ["messages", ...stages.map((s) => s.id.name), "total", "× short"],
    rows
  )
})

const directory = path.join(os.tmpdir(), "keel-bench-prepare")
const services = Layer.merge(TestModel.layer([]), NodeContext.layer)
const program = Effect.gen(function*() {
  console.log(`node ${process.version}, median of ${runs} runs after ${WARM_UPS} warm-ups`)
  const sink = yield* estimateAndAutocompact
  yield* wholePipeline
  if (Number.isNaN(sink)) console.log(sink)
}).pipe(
  Effect.provide(Layer.provideMerge(ContextManagement.layer({ window: 10_000_000, directory }), services))
)

Effect.runPromise(program).catch((e) => {
  console.error(e)
  process.exit(1)
})
