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
 * A scheduler whose calls run in `scope`.
 *
 * @category Constructors
 */
export const make = (options: Options, scope: Scope.Scope): Effect.Effect<Scheduler> =>
  Effect.gen(function*() {
    const commands = yield* Queue.unbounded<Command>()
    const out = yield* Queue.unbounded<Event | typeof END>()
    const interval = Duration.decode(options.progressInterval ?? DEFAULT_PROGRESS_INTERVAL)
    const finished = new Map<string, ToolResultBlock>()

    // State, owned by the loop fiber below.
    let generation = 0
    let entries: Array<Entry> = []
    let nextStart = 0
    let nextEmit = 0
    let running = 0
    let runningUnsafe = 0
    let closed = false
    let cancelledBy: string | undefined

    const emit = (event: Event) => Queue.offer(out, event)

    const ticks = (job: Job) =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        while (true) {
          yield* Effect.sleep(interval)
          const now = yield* Clock.currentTimeMillis
          yield* emit({ _tag: "Progress", toolUseId: job.id, toolName: job.toolName, elapsedSeconds: (now - startedAt) / 1000 })
        }
      })

    const settle = (entry: Entry, result: ToolResultBlock) =>
      Effect.gen(function*() {
        if (entry.fiber !== undefined) {
          running--
          if (!entry.job.safe) runningUnsafe--
          entry.fiber = undefined
        }
        entry.result = result
        finished.set(entry.job.id, result)
        while (nextEmit < entries.length && entries[nextEmit]!.result !== undefined) {
          yield* emit({ _tag: "Result", result: entries[nextEmit]!.result! })
          nextEmit++
        }
        if (closed && nextEmit === entries.length) yield* Queue.offer(out, END)
      })

    const start = (entry: Entry, index: number) =>
      Effect.gen(function*() {
        const gen = generation
        running++
        if (!entry.job.safe) runningUnsafe++
        entry.fiber = yield* Effect.forkIn(
          Effect.gen(function*() {
            yield* Effect.fork(ticks(entry.job))
            const outcome = yield* entry.job.run((event) => emit({ _tag: "Reported", toolUseId: entry.job.id, event }))
            yield* Queue.offer(commands, { _tag: "Done", generation: gen, index, outcome })
          }),
          scope
        )
      })

    /** Starts every queued call the rule allows, in order; a cancelled turn answers them at once. */
    const startReady = Effect.gen(function*() {
      while (nextStart < entries.length) {
        const entry = entries[nextStart]!
        if (cancelledBy !== undefined) {
          nextStart++
          yield* settle(entry, options.cancelled(entry.job.id, cancelledBy))
          continue
        }
        const allowed = running === 0 || (entry.job.safe && runningUnsafe === 0 && running < options.maxConcurrency)
        if (!allowed) return
        yield* start(entry, nextStart)
        nextStart++
      }
    })

    const handle = (command: Command): Effect.Effect<void> =>
      Effect.gen(function*() {
        switch (command._tag) {
          case "Add":
            entries.push({ job: command.job, fiber: undefined, result: undefined })
            return yield* startReady
          case "Close":
            closed = true
            if (nextEmit === entries.length) yield* Queue.offer(out, END)
            return
          case "Discard": {
            const fibers = entries.flatMap((e) => (e.fiber === undefined ? [] : [e.fiber]))
            generation++
            entries = []
            nextStart = nextEmit = running = runningUnsafe = 0
            cancelledBy = undefined
            finished.clear()
            yield* Queue.takeAll(out)
            yield* Effect.forEach(fibers, Fiber.interruptFork, { discard: true })
            return
          }
          case "Done": {
            if (command.generation !== generation) return
            const entry = entries[command.index]!
            if (entry.result !== undefined) return
            yield* settle(entry, command.outcome.result)
            if (command.outcome.cancelsSiblings && cancelledBy === undefined) {
              cancelledBy = entry.job.label
              for (const sibling of entries) {
                if (sibling.fiber === undefined) continue
                const fiber = sibling.fiber
                yield* settle(sibling, options.cancelled(sibling.job.id, cancelledBy))
                yield* Fiber.interruptFork(fiber)
              }
            }
            return yield* startReady
          }
        }
      })

    yield* Effect.forkIn(Effect.forever(Effect.flatMap(Queue.take(commands), handle)), scope)

    return {
      add: (job) => Queue.unsafeOffer(commands, { _tag: "Add", job }),
      close: () => Queue.unsafeOffer(commands, { _tag: "Close" }),
      discard: () => Queue.unsafeOffer(commands, { _tag: "Discard" }),
      events: Stream.fromQueue(out).pipe(
        Stream.takeWhile((e): e is Event => e !== END)
      ),
      finished
    }
  })
