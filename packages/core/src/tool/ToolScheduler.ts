/**
 * The streaming tool scheduler: tool calls are added one by one as their `tool_use` blocks complete
 * in the model's stream, and each starts as soon as Claude Code's rule allows: a call runs when
 * nothing runs, or when it and everything running are concurrency-safe (at most `maxConcurrency` at
 * once). The queue stops at the first call that must wait, so calls start in order. Results come out
 * in the order the calls were added, whatever order they finish in; progress ticks and messages from
 * running tools come out as they happen.
 *
 * A failure of a tool that cancels its siblings (Bash) interrupts the calls running beside it and
 * answers them, and every call still queued, with "Cancelled: parallel tool call … errored".
 *
 * One fiber owns the state: additions, completions and resets are commands on a queue, handled in
 * order, so no two steps ever race. Every fiber lives in the scope given to {@link make}; closing it
 * interrupts every running call.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ToolResultBlock } from "../message/Message.js"
import type { ToolEvent } from "./ToolEvent.js"

/** One call to schedule. @category Models */
export interface Job {
  /** The `tool_use` id it answers. */
  readonly id: string
  readonly toolName: string
  /** Whether it may run beside other concurrency-safe calls. */
  readonly safe: boolean
  /** How a cancellation names this call when it is the one that failed: `Bash(npm test)`. */
  readonly label: string
  /** Runs the call; `emit` reports what it does while it runs (a subagent's events). */
  readonly run: (emit: (event: ToolEvent) => Effect.Effect<void>) => Effect.Effect<Outcome>
}

/** How a call ended. @category Models */
export interface Outcome {
  readonly result: ToolResultBlock
  /** The call failed and its tool cancels its siblings on failure. */
  readonly cancelsSiblings: boolean
}

/** What the scheduler emits. @category Models */
export type Event =
  | { readonly _tag: "Result"; readonly result: ToolResultBlock }
  | { readonly _tag: "Progress"; readonly toolUseId: string; readonly toolName: string; readonly elapsedSeconds: number }
  | { readonly _tag: "Reported"; readonly toolUseId: string; readonly event: ToolEvent }

/** @category Models */
export interface Scheduler {
  /**
   * Queues a call; it starts as soon as the rule allows. Synchronous, so the turn loop can add calls
   * from inside its stream step as blocks complete.
   */
  readonly add: (job: Job) => void
  /** No more calls will be added: `events` ends once every call is answered. */
  readonly close: () => void
  /** Interrupts and forgets every call (the answer that asked for them was retracted). */
  readonly discard: () => void
  /** Progress ticks and messages as they happen, results in call order; ends after `close` once all are answered. */
  readonly events: Stream.Stream<Event>
  /** Results of the calls that finished, by `tool_use` id (finished ones keep theirs when a turn is interrupted). */
  readonly finished: ReadonlyMap<string, ToolResultBlock>
}

/** Options of a scheduler. @category Models */
export interface Options {
  /** Most concurrency-safe calls in flight at once. */
  readonly maxConcurrency: number
  /** Time between `Progress` ticks of a running call (default 1 s). */
  readonly progressInterval?: Duration.DurationInput | undefined
  /** The result given to a call cancelled because `label` failed. */
  readonly cancelled: (id: string, label: string) => ToolResultBlock
}

/** Time between progress ticks of a running call. @category Constants */
export const DEFAULT_PROGRESS_INTERVAL = Duration.seconds(1)

type Command =
  | { readonly _tag: "Add"; readonly job: Job }
  | { readonly _tag: "Close" }
  | { readonly _tag: "Discard" }
  | { readonly _tag: "Done"; readonly generation: number; readonly index: number; readonly outcome: Outcome }

interface Entry {
  readonly job: Job
  fiber: Fiber.RuntimeFiber<void> | undefined
  result: ToolResultBlock | undefined
}

const END = Symbol("end")

/**
 * A scheduler's state, owned by its loop fiber (only commands taken from `commands` change it), and
 * what its steps use: the options, the scope calls run in, the queue of commands and the one of events.
 */
interface State {
  readonly options: Options
  readonly scope: Scope.Scope
  readonly commands: Queue.Queue<Command>
  readonly out: Queue.Queue<Event | typeof END>
  readonly interval: Duration.Duration
  readonly finished: Map<string, ToolResultBlock>
  /** Counts discards: a `Done` from a call of an earlier generation is ignored. */
  generation: number
  entries: Array<Entry>
  /** The next call to start, and the next whose result is emitted. */
  nextStart: number
  nextEmit: number
  /** Calls running, and how many of them are not concurrency-safe. */
  running: number
  runningUnsafe: number
  closed: boolean
  /** The label of the call whose failure cancelled the others, once one did. */
  cancelledBy: string | undefined
}

const emit = (state: State, event: Event) => Queue.offer(state.out, event)

/** `Progress` ticks of a running call, every `interval`, until the call's fiber ends. */
const ticks = (state: State, job: Job) =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    while (true) {
      yield* Effect.sleep(state.interval)
      const now = yield* Clock.currentTimeMillis
      const elapsedSeconds = (now - startedAt) / 1000
      yield* emit(state, { _tag: "Progress", toolUseId: job.id, toolName: job.toolName, elapsedSeconds })
    }
  })

/**
 * Gives a call its result, then emits every result now due, in call order (and the end of the
 * events once all are out after `close`).
 */
const settle = (state: State, entry: Entry, result: ToolResultBlock) =>
  Effect.gen(function*() {
    if (entry.fiber !== undefined) {
      state.running--
      if (!entry.job.safe) state.runningUnsafe--
      entry.fiber = undefined
    }
    entry.result = result
    state.finished.set(entry.job.id, result)
    while (state.nextEmit < state.entries.length && state.entries[state.nextEmit]!.result !== undefined) {
      yield* emit(state, { _tag: "Result", result: state.entries[state.nextEmit]!.result! })
      state.nextEmit++
    }
    if (state.closed && state.nextEmit === state.entries.length) yield* Queue.offer(state.out, END)
  })

/** Starts call `index` in the scope, with its progress ticks; its outcome comes back as a `Done` command. */
const start = (state: State, entry: Entry, index: number) =>
  Effect.gen(function*() {
    const gen = state.generation
    state.running++
    if (!entry.job.safe) state.runningUnsafe++
    entry.fiber = yield* Effect.forkIn(
      Effect.gen(function*() {
        yield* Effect.fork(ticks(state, entry.job))
        const outcome = yield* entry.job.run((event) =>
          emit(state, { _tag: "Reported", toolUseId: entry.job.id, event })
        )
        yield* Queue.offer(state.commands, { _tag: "Done", generation: gen, index, outcome })
      }),
      state.scope
    )
  })

/** Starts every queued call the rule allows, in order; a cancelled turn answers them at once. */
const startReady = (state: State) =>
  Effect.gen(function*() {
    const { options } = state
    while (state.nextStart < state.entries.length) {
      const entry = state.entries[state.nextStart]!
      if (state.cancelledBy !== undefined) {
        state.nextStart++
        yield* settle(state, entry, options.cancelled(entry.job.id, state.cancelledBy))
        continue
      }
      const allowed = state.running === 0 ||
        (entry.job.safe && state.runningUnsafe === 0 && state.running < options.maxConcurrency)
      if (!allowed) return
      yield* start(state, entry, state.nextStart)
      state.nextStart++
    }
  })

/** `Discard`: forgets every call and every event not yet taken, then interrupts the running calls. */
const discard = (state: State) =>
  Effect.gen(function*() {
    const fibers = state.entries.flatMap((e) => (e.fiber === undefined ? [] : [e.fiber]))
    state.generation++
    state.entries = []
    state.nextStart = state.nextEmit = state.running = state.runningUnsafe = 0
    state.cancelledBy = undefined
    state.finished.clear()
    yield* Queue.takeAll(state.out)
    yield* Effect.forEach(fibers, Fiber.interruptFork, { discard: true })
  })

/** Answers every running call as cancelled because the call `label` failed, and interrupts it. */
const cancelRunning = (state: State, label: string) =>
  Effect.gen(function*() {
    for (const sibling of state.entries) {
      if (sibling.fiber === undefined) continue
      const fiber = sibling.fiber
      yield* settle(state, sibling, state.options.cancelled(sibling.job.id, label))
      yield* Fiber.interruptFork(fiber)
    }
  })

/** `Done`: settles a call of this generation not yet answered; a failure that cancels its siblings cancels them. */
const done = (state: State, command: Extract<Command, { readonly _tag: "Done" }>) =>
  Effect.gen(function*() {
    if (command.generation !== state.generation) return
    const entry = state.entries[command.index]!
    if (entry.result !== undefined) return
    yield* settle(state, entry, command.outcome.result)
    if (command.outcome.cancelsSiblings && state.cancelledBy === undefined) {
      state.cancelledBy = entry.job.label
      yield* cancelRunning(state, entry.job.label)
    }
    return yield* startReady(state)
  })

/** One command, handled by the loop fiber. */
const handle = (state: State, command: Command): Effect.Effect<void> =>
  Effect.gen(function*() {
    switch (command._tag) {
      case "Add":
        state.entries.push({ job: command.job, fiber: undefined, result: undefined })
        return yield* startReady(state)
      case "Close":
        state.closed = true
        if (state.nextEmit === state.entries.length) yield* Queue.offer(state.out, END)
        return
      case "Discard":
        return yield* discard(state)
      case "Done":
        return yield* done(state, command)
    }
  })

/**
 * A scheduler whose calls run in `scope`: its loop fiber, forked in `scope` too, takes the commands
 * one at a time and is the only one to change the state.
 *
 * @category Constructors
 */
export const make = (options: Options, scope: Scope.Scope): Effect.Effect<Scheduler> =>
  Effect.gen(function*() {
    const commands = yield* Queue.unbounded<Command>()
    const out = yield* Queue.unbounded<Event | typeof END>()
    const state: State = {
      options,
      scope,
      commands,
      out,
      interval: Duration.decode(options.progressInterval ?? DEFAULT_PROGRESS_INTERVAL),
      finished: new Map(),
      generation: 0,
      entries: [],
      nextStart: 0,
      nextEmit: 0,
      running: 0,
      runningUnsafe: 0,
      closed: false,
      cancelledBy: undefined
    }

    yield* Effect.forkIn(
      Effect.forever(Effect.flatMap(Queue.take(commands), (command) => handle(state, command))),
      scope
    )

    return {
      add: (job) => Queue.unsafeOffer(commands, { _tag: "Add", job }),
      close: () => Queue.unsafeOffer(commands, { _tag: "Close" }),
      discard: () => Queue.unsafeOffer(commands, { _tag: "Discard" }),
      events: Stream.fromQueue(out).pipe(
        Stream.takeWhile((e): e is Event => e !== END)
      ),
      finished: state.finished
    }
  })
