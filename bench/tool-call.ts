/**
 * What one tool call costs outside the turn loop: the `Read` tool reading a small file (the
 * `bench-loop-N` rounds' work: a different 5-line file each call) and the permission check of that
 * call (mode `default`, the file inside the working directory; and `bypassPermissions`). Each
 * figure per call: wall µs and the process's CPU µs (median over KEEL_BENCH_RUNS samples of 500
 * calls, after 500 warm-ups), and the Effect operations and fiber suspensions per call (a
 * `Supervisor` with op supervision on) — a suspension is an `await` of a promise or callback, such
 * as a thread-pool round trip of `node:fs`.
 *
 * Run: npx tsx bench/tool-call.ts   (after `npm run build`; KEEL_BENCH_RUNS=9 to change)
 */
import { NodeContext } from "@effect/platform-node"
import { FileState, Ids, Message, Permissions, SessionState, SessionStore, TokenUsage, TranscriptRecorder } from "@keel/core"
import { Read } from "@keel/tools"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Effect, Layer, Ref, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { loopFile, loopFileText } from "./scenario.js"

const runs = Number(process.env.KEEL_BENCH_RUNS ?? 9)
const batch = 500

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-tool-call-")))
fs.mkdirSync(path.join(dir, "files"))
for (let k = 1; k <= batch; k++) fs.writeFileSync(path.join(dir, loopFile(k)), loopFileText(k))

const session = Layer.merge(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")))

/** Counts Effect operations and suspensions (async waits) of the fibers it supervises. */
class Counter extends Supervisor.AbstractSupervisor<void> {
  ops = 0
  suspends = 0
  get value() {
    return Effect.void
  }
  override onEffect() {
    this.ops++
  }
  override onSuspend() {
    this.suspends++
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** µs (wall, CPU) per call of `call(k)`, k = 1..batch, and ops and suspensions per call. */
const measure = <E, R>(name: string, call: (k: number) => Effect.Effect<unknown, E, R>, layer: Layer.Layer<R, never, never>) =>
  Effect.gen(function*() {
    const all = Effect.forEach(Array.from({ length: batch }, (_, i) => i + 1), call, { discard: true })
    yield* all
    const wall: Array<number> = []
    const cpu: Array<number> = []
    for (let r = 0; r < runs; r++) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      yield* all
      wall.push(((performance.now() - t0) * 1000) / batch)
      const c = process.cpuUsage(c0)
      cpu.push((c.user + c.system) / batch)
    }
    const counter = new Counter()
    yield* all.pipe(
      Effect.supervised(counter),
      Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
    )
    console.log(
      `${name.padEnd(34)} ${median(wall).toFixed(1).padStart(7)} µs wall ${median(cpu).toFixed(1).padStart(7)} µs CPU ` +
        `${(counter.ops / batch).toFixed(0).padStart(5)} ops ${(counter.suspends / batch).toFixed(1).padStart(5)} suspensions per call`
    )
  }).pipe(Effect.provide(layer))

/** KEEL_BENCH_ONLY=read,permission,transcript: the measures to run (all by default). */
const only = (name: string) => process.env.KEEL_BENCH_ONLY === undefined || process.env.KEEL_BENCH_ONLY.split(",").includes(name)

const program = Effect.gen(function*() {
  const read = yield* Read.make
  // A fresh session per 500 calls: its file state grows as in one turn of 500 rounds.
  let readState: SessionState.Service = yield* SessionState.make("read")
  const readCall = (k: number) =>
    Effect.gen(function*() {
      if (k === 1) readState = yield* SessionState.make("read")
      return yield* read.call({ file_path: loopFile(k) }, { toolUseId: "t", cwd: dir }).pipe(
        Effect.provideService(SessionState.SessionState, readState)
      )
    })
  if (only("read")) yield* measure("Read of a 5-line file", readCall, Layer.empty)
  for (const mode of only("permission") ? ["default", "bypassPermissions"] as const : []) {
    const policy = Permissions.make(Permissions.config({ mode }).config)
    yield* measure(
      `permission check, ${mode}`,
      (k) => policy.check({ toolName: "Read", input: { file_path: loopFile(k) }, isReadOnly: true, toolUseId: "t", cwd: dir }),
      Layer.empty
    )
  }
  // A round's transcript work: the answer appended and checkpointed, then the tool result and the
  // file read (usage and file_state change too), checkpointed; on disk, no sync (one per turn). The
  // messages are built unchecked, as the kernel builds them. A fresh session per 500 rounds, so that
  // the conversation grows as in one turn of 500 rounds (each round's call k of a batch starts one at k = 1).
  const files = SessionStore.fileSystemFiles(yield* FileSystem.FileSystem, yield* Path.Path)
  let session = 0
  let state: SessionState.Service = yield* SessionState.make("bench")
  let recorder: TranscriptRecorder.Recorder = TranscriptRecorder.disabled
  const fresh = Effect.gen(function*() {
    const id = `bench-${session++}`
    state = yield* SessionState.make(id, [new Message.UserMessage({ content: "hi" }, true)])
    recorder = yield* TranscriptRecorder.make({
      store: SessionStore.make({ home: path.join(dir, "home"), files }),
      cwd: dir,
      sessionId: id,
      state,
      primaryModel: Effect.succeed("claude-sonnet-4-6"),
      uuid: Ids.seeded(1).uuid
    })
  })
  const round = (k: number) =>
    Effect.gen(function*() {
      if (k === 1) yield* fresh
      const id = `toolu_${k}`
      const usage = new Message.Usage({ input_tokens: 10, output_tokens: 100, cache_creation_input_tokens: null, cache_read_input_tokens: null }, true)
      const answer = new Message.AssistantMessage({
        content: [new Message.ToolUseBlock({ id, name: "Read", input: { file_path: loopFile(k) } }, true)],
        id: "msg",
        model: "claude-sonnet-4-6",
        stop_reason: "tool_use",
        stop_sequence: null,
        usage
      }, true)
      yield* Ref.update(state.messages, (ms) => [...ms, answer])
      yield* Ref.update(state.usage, (u) => TokenUsage.addTo(u, "claude-sonnet-4-6", TokenUsage.fromResponse(usage)))
      yield* recorder.checkpoint()
      const text = loopFileText(k)
      const result = new Message.UserMessage({
        content: [new Message.ToolResultBlock({ tool_use_id: id, content: text, toolUseResult: { type: "text", file: { filePath: loopFile(k), content: text } } }, true)]
      }, true)
      yield* FileState.record(path.join(dir, loopFile(k)), k).pipe(Effect.provideService(SessionState.SessionState, state))
      yield* Ref.update(state.messages, (ms) => [...ms, result])
      yield* recorder.checkpoint()
    })
  if (only("transcript")) yield* measure("transcript: a round's 2 checkpoints", round, Layer.empty)
}).pipe(Effect.provide(session))

await Effect.runPromise(program)
fs.rmSync(dir, { recursive: true, force: true })
