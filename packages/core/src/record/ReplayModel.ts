/**
 * The replay layer: a base `ModelClient` that serves a journal's recorded calls in order (see
 * `JournalEntry`), each read of each stream at its recorded offset on `Clock`, each failure as the
 * typed error recorded, a call its consumer interrupted (a stall the watchdog cut) as a stream that
 * goes quiet again. Under `TestClock` a replay keeps every wait's length and costs none of it.
 *
 * Call n must send the body call n sent when recorded. When it does not (or when the kernel makes
 * a call the recording does not have) the replay has diverged: the call fails with a non-retryable
 * `InvalidRequest` naming the divergence, and `Replay.divergence` holds it, typed: which call, the
 * JSON path of the first differing field, and a diff.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Credentials from "../model/Credentials.js"
import { type Item, ModelClient } from "../model/ModelClient.js"
import { InvalidRequest, type ModelError } from "../model/ModelError.js"
import type * as Thinking from "../model/Thinking.js"
import { sha256 } from "../internal/sha256.js"
import type * as JournalEntry from "./JournalEntry.js"
import { bodyOf } from "./RecordingModel.js"
import * as RequestDiff from "./RequestDiff.js"

/** The kernel asked for something other than what was recorded. @category Errors */
export class ReplayDivergence extends Schema.TaggedError<ReplayDivergence>("@keel/ReplayDivergence")(
  "ReplayDivergence",
  {
    /** The model call, from 1. */
    call: Schema.Number,
    /** The JSON path of the first differing field of the request body (`$` for a call not recorded). */
    path: Schema.String,
    /** The recorded and the new value, as a diff (`-` recorded, `+` now). */
    diff: Schema.String,
    message: Schema.String
  }
) {}

/** One recorded call, as the replay serves it. @category Models */
export interface RecordedCall {
  readonly call: number
  readonly hash: string
  readonly body: string
  readonly chunks: ReadonlyArray<{ readonly at: number; readonly items: ReadonlyArray<Item> }>
  readonly end?: typeof JournalEntry.End.Type | undefined
}

/** The calls of a journal, in order, with their bodies, reads and ends. @category Conversions */
export const calls = (entries: ReadonlyArray<JournalEntry.Entry>): ReadonlyArray<RecordedCall> => {
  const bodies = new Map<string, string>()
  const byCall = new Map<number, { call: number; hash: string; chunks: Array<RecordedCall["chunks"][number]>; end?: typeof JournalEntry.End.Type }>()
  // Each header starts a process's segment, whose calls number from 1: they follow the last segment's.
  let offset = 0
  let last = 0
  for (const entry of entries) {
    if (entry.type === "journal") offset = last
    else if (entry.type === "body") bodies.set(entry.hash, entry.body)
    else if (entry.type === "call") {
      last = Math.max(last, offset + entry.call)
      byCall.set(offset + entry.call, { call: offset + entry.call, hash: entry.hash, chunks: [] })
    } else if (entry.type === "chunk") {
      byCall.get(offset + entry.call)?.chunks.push({ at: entry.at, items: entry.items as ReadonlyArray<Item> })
    } else if (entry.type === "end") {
      const c = byCall.get(offset + entry.call)
      if (c !== undefined) c.end = entry
    }
  }
  return [...byCall.values()].sort((a, b) => a.call - b.call).map((c) => ({ ...c, body: bodies.get(c.hash) ?? "" }))
}

/** @category Models */
export interface Service {
  /** The first divergence, once the kernel has asked for something not recorded. */
  readonly divergence: Effect.Effect<Option.Option<ReplayDivergence>>
  /** How many recorded calls have been served. */
  readonly served: Effect.Effect<number>
  /** How many calls the recording has. */
  readonly recorded: number
}

/** The state of a replay. @category Context */
export class Replay extends Context.Tag("@keel/core/Replay")<Replay, Service>() {}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Why call `n` (sending `body`) diverges from `recorded`, if it does. @category Comparing */
export const compare = (n: number, body: string, recorded: RecordedCall | undefined, total: number): ReplayDivergence | undefined => {
  if (recorded === undefined) {
    const diff = RequestDiff.render({ path: "$", expected: undefined, actual: parseJson(body) }, 6)
    return new ReplayDivergence({
      call: n,
      path: "$",
      diff,
      message: `The replay diverged at model call ${n}: the recording has ${total} call${total === 1 ? "" : "s"}`
    })
  }
  if (sha256(body) === recorded.hash) return undefined
  const difference = RequestDiff.first(parseJson(recorded.body), parseJson(body)) ??
    { path: "$", expected: recorded.body, actual: body }
  return new ReplayDivergence({
    call: n,
    path: difference.path,
    diff: RequestDiff.render(difference),
    message: `The replay diverged at model call ${n}: ${difference.path} differs from the recording`
  })
}

const waitUntil = (from: number, to: number) => (to > from ? Effect.sleep(Duration.millis(to - from)) : Effect.void)

/** The recorded stream of one call, its reads at their offsets. */
const play = (recorded: RecordedCall): Stream.Stream<Item, ModelError> => {
  let last = 0
  const reads = Stream.fromIterable(recorded.chunks).pipe(
    Stream.flatMap((chunk) => {
      const wait = waitUntil(last, chunk.at)
      last = chunk.at
      return Stream.concat(Stream.drain(Stream.fromEffect(wait)), Stream.fromChunk(Chunk.unsafeFromArray([...chunk.items])))
    }, { concurrency: 1 })
  )
  const end = recorded.end
  if (end === undefined || end.outcome === "interrupted") return Stream.concat(reads, Stream.never)
  if (end.outcome === "done") return reads
  const error = end.error
  return Stream.concat(
    reads,
    Stream.fromEffect(Effect.suspend(() => Effect.zipRight(waitUntil(last, end.at), error === undefined ? Effect.never : Effect.fail(error))))
  )
}

/** Options of {@link layer}. @category Models */
export interface Options {
  /** The thinking table bodies are built with (as when recorded; default `Thinking.defaultTable`). */
  readonly thinkingModels?: Thinking.Table | undefined
}

/**
 * A `ModelClient` serving the journal's calls in order, the `Replay` state, and `Credentials.none`
 * (a replay has no key to refresh).
 *
 * @category Layers
 */
export const layer = (
  entries: ReadonlyArray<JournalEntry.Entry>,
  options: Options = {}
): Layer.Layer<ModelClient | Replay | Credentials.Credentials> =>
  Layer.effectContext(Effect.sync(() => {
    const recorded = calls(entries)
    let served = 0
    let diverged: ReplayDivergence | undefined
    const client = ModelClient.of({
      stream: (request) =>
        Stream.suspend(() => {
          const n = served + 1
          if (diverged === undefined) diverged = compare(n, bodyOf(request, options.thinkingModels), recorded[n - 1], recorded.length)
          if (diverged !== undefined) return Stream.fail(new InvalidRequest({ message: diverged.message }))
          served = n
          return play(recorded[n - 1]!)
        })
    })
    return Context.make(ModelClient, client).pipe(
      Context.add(Replay, {
        divergence: Effect.sync(() => Option.fromNullable(diverged)),
        served: Effect.sync(() => served),
        recorded: recorded.length
      }),
      Context.add(Credentials.Credentials, Credentials.none)
    )
  }))
