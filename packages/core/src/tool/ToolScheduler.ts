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
 * The state is changed only by synchronous steps (adding a call, closing, discarding, a call's
 * outcome), so no two steps ever interleave, and the scheduler needs no fiber or queue of its own:
 * a round costs one fiber per call (and its progress ticker). Every call's fiber lives in the scope
 * given to {@link make}; closing it interrupts every running call and waits for it.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
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
  /**
   * `events` without the results (a consumer that reads them from `finished`): a chunk that would
   * hold only results is not emitted at all, rather than emitted empty.
   */
  readonly progress: Stream.Stream<Exclude<Event, { readonly _tag: "Result" }>>
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

interface Entry {
  readonly job: Job
  fiber: Fiber.RuntimeFiber<void> | undefined
  result: ToolResultBlock | undefined
}

/**
 * A scheduler's state and what its steps use: the options, how a call's fiber is forked, the events
 * not yet taken. Every step is synchronous (JavaScript runs one at a time), so no two ever interleave;
 * a call's fiber hands its outcome back by calling {@link done} when it ends.
 */
interface State {
  readonly options: Options
  /** Forks a call's fiber (started on the next tick, as `Effect.fork` does) in the scheduler's scope. */
  readonly fork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** Who interrupts the calls a discard or a failure stops. */
  readonly self: FiberId.FiberId
  readonly interval: Duration.Duration
  readonly finished: Map<string, ToolResultBlock>
  /** Events not yet taken by the consumer. */
  out: Array<Event>
  /** The consumer, while it waits for an event. */
  waiting: (() => void) | undefined
  /** Every call is answered after `close`, and the last result is out. */
  ended: boolean
  /** Counts discards: an outcome from a call of an earlier generation is ignored. */
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

const isProgress = (event: Event): event is Exclude<Event, { readonly _tag: "Result" }> => event._tag !== "Result"

const wake = (state: State) => {
  const resume = state.waiting
  state.waiting = undefined
  resume?.()
}

const emit = (state: State, event: Event) => {
  state.out.push(event)
  wake(state)
}

/** After `close`, once every result is out: the end of the events. */
const endIfDone = (state: State) => {
  if (state.closed && state.nextEmit === state.entries.length && !state.ended) {
    state.ended = true
    wake(state)
  }
}

/** `Progress` ticks of a running call, every `interval`, until the call's fiber ends. */
const ticks = (state: State, job: Job) =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    while (true) {
      yield* Effect.sleep(state.interval)
      const now = yield* Clock.currentTimeMillis
      const elapsedSeconds = (now - startedAt) / 1000
      emit(state, { _tag: "Progress", toolUseId: job.id, toolName: job.toolName, elapsedSeconds })
    }
  })

/**
 * Gives a call its result, then emits every result now due, in call order (and the end of the
 * events once all are out after `close`).
 */
const settle = (state: State, entry: Entry, result: ToolResultBlock) => {
  if (entry.fiber !== undefined) {
    state.running--
    if (!entry.job.safe) state.runningUnsafe--
    entry.fiber = undefined
  }
  entry.result = result
  state.finished.set(entry.job.id, result)
  while (state.nextEmit < state.entries.length && state.entries[state.nextEmit]!.result !== undefined) {
    emit(state, { _tag: "Result", result: state.entries[state.nextEmit]!.result! })
    state.nextEmit++
  }
  endIfDone(state)
}

/** Starts call `index` in the scope, with its progress ticks; its outcome comes back through {@link done}. */
const start = (state: State, entry: Entry, index: number) => {
  const gen = state.generation
  state.running++
  if (!entry.job.safe) state.runningUnsafe++
  entry.fiber = state.fork(Effect.gen(function*() {
    yield* Effect.fork(ticks(state, entry.job))
    const outcome = yield* entry.job.run((event) =>
      Effect.sync(() => emit(state, { _tag: "Reported", toolUseId: entry.job.id, event }))
    )
    done(state, gen, index, outcome)
  }))
}

/** Starts every queued call the rule allows, in order; a cancelled turn answers them at once. */
const startReady = (state: State) => {
  const { options } = state
  while (state.nextStart < state.entries.length) {
    const entry = state.entries[state.nextStart]!
    if (state.cancelledBy !== undefined) {
      state.nextStart++
      settle(state, entry, options.cancelled(entry.job.id, state.cancelledBy))
      continue
    }
    const allowed = state.running === 0 ||
      (entry.job.safe && state.runningUnsafe === 0 && state.running < options.maxConcurrency)
    if (!allowed) return
    start(state, entry, state.nextStart)
    state.nextStart++
  }
}

/**
 * Interrupts a call's fiber from a fiber of its own, as `Fiber.interruptFork` does: a call forked in
 * the same step has started by then (and is stopped, not skipped).
 */
const interruptLater = (state: State, fiber: Fiber.RuntimeFiber<void>) => {
  state.fork(Effect.asVoid(Fiber.interruptAs(fiber, state.self)))
}

/** Forgets every call and every event not yet taken, then interrupts the running calls. */
const discard = (state: State) => {
  const fibers = state.entries.flatMap((e) => (e.fiber === undefined ? [] : [e.fiber]))
  state.generation++
  state.entries = []
  state.nextStart = state.nextEmit = state.running = state.runningUnsafe = 0
  state.cancelledBy = undefined
  state.finished.clear()
  state.out = []
  for (const fiber of fibers) interruptLater(state, fiber)
}

/** Answers every running call as cancelled because the call `label` failed, and interrupts it. */
const cancelRunning = (state: State, label: string) => {
  for (const sibling of state.entries) {
    if (sibling.fiber === undefined) continue
    const fiber = sibling.fiber
    settle(state, sibling, state.options.cancelled(sibling.job.id, label))
    interruptLater(state, fiber)
  }
}

/** A call ended: settles it if it is of this generation and not yet answered; a failure that cancels its siblings cancels them. */
const done = (state: State, generation: number, index: number, outcome: Outcome) => {
  if (generation !== state.generation) return
  const entry = state.entries[index]!
  if (entry.result !== undefined) return
  settle(state, entry, outcome.result)
  if (outcome.cancelsSiblings && state.cancelledBy === undefined) {
    state.cancelledBy = entry.job.label
    cancelRunning(state, entry.job.label)
  }
  startReady(state)
}

/**
 * A scheduler whose calls run in `scope`: each call is a fiber forked in it (closing it interrupts
 * them and waits for them to end). The scheduler itself has no fiber and no queue: adding, closing
 * and discarding are synchronous steps on its state, and the events are handed to the consumer
 * through a buffer and a callback.
 *
 * @category Constructors
 */
export const make = (options: Options, scope: Scope.Scope): Effect.Effect<Scheduler> =>
  Effect.gen(function*() {
    const fork = Runtime.runFork(yield* Effect.runtime<never>())
    const fibers = new Set<Fiber.RuntimeFiber<void>>()
    yield* Scope.addFinalizer(scope, Effect.suspend(() => fibers.size === 0 ? Effect.void : Fiber.interruptAll(fibers)))
    const state: State = {
      options,
      // Not `immediate`: a call added from inside the model stream's step starts after that step.
      fork: (effect) => {
        const fiber = fork(effect, { immediate: false })
        fibers.add(fiber)
        fiber.addObserver(() => fibers.delete(fiber))
        return fiber
      },
      self: yield* Effect.fiberId,
      interval: Duration.decode(options.progressInterval ?? DEFAULT_PROGRESS_INTERVAL),
      finished: new Map(),
      out: [],
      waiting: undefined,
      ended: false,
      generation: 0,
      entries: [],
      nextStart: 0,
      nextEmit: 0,
      running: 0,
      runningUnsafe: 0,
      closed: false,
      cancelledBy: undefined
    }
    /** The events out so far (those `keep` keeps), in one chunk; else waits for one, or ends. */
    const pullWhere = <A extends Event>(keep: ((event: Event) => event is A) | undefined) => {
      const pull: Effect.Effect<Chunk.Chunk<A>, Option.Option<never>> = Effect.suspend(() => {
        if (state.out.length > 0) {
          const events = keep === undefined ? state.out as Array<A> : state.out.filter(keep)
          state.out = []
          if (events.length > 0) return Effect.succeed(Chunk.unsafeFromArray(events))
        }
        if (state.ended) return Effect.fail(Option.none())
        return Effect.async<Chunk.Chunk<A>, Option.Option<never>>((resume) => {
          state.waiting = () => resume(pull)
          return Effect.sync(() => {
            state.waiting = undefined
          })
        })
      })
      return pull
    }
    return {
      add: (job) => {
        state.entries.push({ job, fiber: undefined, result: undefined })
        startReady(state)
      },
      close: () => {
        state.closed = true
        endIfDone(state)
      },
      discard: () => discard(state),
      events: Stream.repeatEffectChunkOption(pullWhere(undefined)),
      progress: Stream.repeatEffectChunkOption(pullWhere(isProgress)),
      finished: state.finished
    }
  })
