/**
 * The sessions a protocol server fronts. Each is opened by the {@link SessionOpener} in a scope of
 * its own, gets its runtime (`SessionRuntime`, the one owner of its queue) and one reader of its
 * turns: every turn that runs, whoever admitted it, is read once, as it runs, and its events are
 * published to the session's hub, from which each `turn.start` (its own turn) and each
 * `session.events` (all turns) reads. So a turn's output never depends on a caller reading it,
 * and turns the runtime starts by itself are seen too.
 *
 * A queued turn that will not run is published as `Cancelled` by whoever dropped it here (remove,
 * clear, close): the runtime tells only the turn's own stream, which this server does not read.
 * The session's actions (what its turns wait on) are published as they open and close, each with
 * the turn it pauses.
 *
 * @since 0.1.0
 */
import type { Actions, Pricing, Session, SessionRuntime, Transcript, TranscriptError } from "@keel/core"
import { RuntimeProtocol } from "@keel/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A session opened for the server, with what its start reported. @category Models */
export interface Opened {
  readonly session: Session.Service
  /** One line per problem that did not stop it (an MCP server that did not connect). */
  readonly warnings: ReadonlyArray<string>
  /**
   * Makes the session's runtime (`SessionRuntime.make` over `session`, with what it needs from the
   * session's layers), in the scope it is given.
   */
  readonly runtime: Effect.Effect<SessionRuntime.Service, never, Scope.Scope>
  /** The session's actions: what its turns wait on, answered with `respond`. */
  readonly actions: Actions.Service
  /** The session's transcript as saved so far (the current conversation's, after a `/clear`). */
  readonly transcript: Effect.Effect<Transcript.Decoded, TranscriptError.LoadError>
  /** Prices for the read model's and the exports' costs (default `Pricing.defaultTable`). */
  readonly pricing?: Pricing.Table | undefined
}

/**
 * How sessions are opened: `keel serve` builds the run's Layer graph for each (`Runtime.layer`,
 * `Runtime.openSession`), a test opens them on the testing layer. `open` runs in the session's
 * scope: what it starts (MCP servers, the session's span) closes with the session.
 *
 * @category Context
 */
export class SessionOpener extends Context.Tag("@keel/cli/serve/SessionOpener")<SessionOpener, {
  readonly open: (
    options: RuntimeProtocol.StartOptions
  ) => Effect.Effect<Opened, RuntimeProtocol.SessionStartFailed, Scope.Scope>
}>() {}

/**
 * What a session's hub carries: the protocol's events, and two the streams end on: a turn that
 * died (`Failed`) and the session closing (`Closed`, always last).
 *
 * @category Models
 */
export type Published =
  | RuntimeProtocol.RuntimeEvent
  | { readonly _tag: "Failed"; readonly turnId: string; readonly message: string }
  | { readonly _tag: "Closed" }

/** A session being served. @category Models */
export interface Served {
  readonly sessionId: string
  readonly cwd: string
  readonly session: Session.Service
  readonly runtime: SessionRuntime.Service
  readonly actions: Actions.Service
  readonly transcript: Effect.Effect<Transcript.Decoded, TranscriptError.LoadError>
  readonly pricing: Pricing.Table | undefined
  /** Every turn's events as they happen: subscribe before submitting to see a turn whole. */
  readonly events: PubSub.PubSub<Published>
}

/** @category Models */
export interface Service {
  /** Opens a session; `SessionAlreadyOpen` when its id is served already (two runtimes must not share a transcript). */
  readonly start: (
    options: RuntimeProtocol.StartOptions
  ) => Effect.Effect<
    { readonly served: Served; readonly warnings: ReadonlyArray<string> },
    RuntimeProtocol.SessionStartFailed | RuntimeProtocol.SessionAlreadyOpen
  >
  readonly get: (sessionId: string) => Effect.Effect<Served, RuntimeProtocol.SessionNotFound>
  readonly list: Effect.Effect<ReadonlyArray<Served>>
  /** Publishes that queued turns were dropped (by `remove` or `clear`). */
  readonly cancelled: (
    served: Served,
    turnIds: ReadonlyArray<string>,
    reason: "removed" | "cleared"
  ) => Effect.Effect<void>
  /**
   * Closes a session: the running turn stops (its events end with `Ended`), what waits is
   * `Cancelled`, then `Closed` is published and its MCP servers and layers close.
   */
  readonly close: (sessionId: string) => Effect.Effect<void, RuntimeProtocol.SessionNotFound>
  /** Waits until every session is idle (nothing runs, nothing waits), then closes them all. */
  readonly closeAllWhenIdle: Effect.Effect<void>
}

/** @category Context */
export class Sessions extends Context.Tag("@keel/cli/serve/Sessions")<Sessions, Service>() {}

/** A served session and how to close it. */
interface Entry {
  readonly served: Served
  readonly close: Effect.Effect<void>
}

/**
 * Opens the served session over `opened` in `scope`: its runtime in a scope of its own (closed
 * first), the readers of its turns and of its actions in `scope`, so they see the last turn out;
 * then the runtime takes up what the transcript left (pending actions, a cut turn, queued input).
 */
const serve = (opened: Opened, scope: Scope.CloseableScope) =>
  Effect.gen(function*() {
    const { session } = opened
    const sessionId = yield* session.sessionId
    const { cwd } = yield* session.init
    const events = yield* PubSub.unbounded<Published>()
    const runtimeScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const runtime = yield* opened.runtime.pipe(Scope.extend(runtimeScope))
    const turns = yield* runtime.turns.pipe(Scope.extend(scope))
    const publish = (event: Published) => PubSub.publish(events, event)
    const reader = yield* Stream.runForEach(turns, ({ events: messages, turnId }) =>
      publish(RuntimeProtocol.Started.make({ turnId })).pipe(
        Effect.zipRight(Stream.runForEach(messages, (message) => publish(RuntimeProtocol.TurnMessage.make({ turnId, message })))),
        Effect.matchCauseEffect({
          onSuccess: () => publish(RuntimeProtocol.Ended.make({ turnId })),
          onFailure: (cause) => publish({ _tag: "Failed", turnId, message: describe(cause) })
        })
      )).pipe(Effect.forkIn(scope))
    // The actions' events, each with the turn it pauses (an answer names only the action).
    const turnOf = new Map<string, string | null>()
    yield* Stream.runForEach(yield* opened.actions.subscribe.pipe(Scope.extend(scope)), (event) => {
      if (event.event === "opened") turnOf.set(event.action.id, event.action.turnId)
      const turnId = event.event === "opened" ? event.action.turnId : turnOf.get(event.id) ?? null
      if (event.event !== "opened") turnOf.delete(event.id)
      return publish(RuntimeProtocol.ActionEvent.make({ turnId, event }))
    }).pipe(Effect.forkIn(scope))
    yield* runtime.resume
    const served: Served = {
      sessionId,
      cwd,
      session,
      runtime,
      actions: opened.actions,
      transcript: opened.transcript,
      pricing: opened.pricing,
      events
    }
    const close = Effect.gen(function*() {
      const queued = yield* runtime.queue
      yield* Scope.close(runtimeScope, Exit.void)
      yield* Fiber.join(reader)
      yield* Effect.forEach(
        queued,
        (q) => publish(RuntimeProtocol.Cancelled.make({ turnId: q.id, reason: "closed" })),
        { discard: true }
      )
      yield* publish({ _tag: "Closed" })
      yield* Scope.close(scope, Exit.void)
    })
    return { served, close } satisfies Entry
  })

const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : String(error)
}

/**
 * The sessions of one server; closing the layer closes every session still open.
 *
 * @category Constructors
 */
export const make: Effect.Effect<Service, never, SessionOpener | Scope.Scope> = Effect.gen(function*() {
  const opener = yield* SessionOpener
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())

  const take = (sessionId: string) =>
    Ref.modify(entries, (map) => {
      const entry = map.get(sessionId)
      if (entry === undefined) return [undefined, map] as const
      const rest = new Map(map)
      rest.delete(sessionId)
      return [entry, rest] as const
    })

  const closeAll = Effect.flatMap(Ref.getAndSet(entries, new Map()), (map) =>
    Effect.forEach(map.values(), (entry) => entry.close, { discard: true, concurrency: "unbounded" }))
  yield* Effect.addFinalizer(() => closeAll)

  // Not interruptible between the open and the registration, so a session is never left open
  // unlisted; the open itself is (and what it forks must be, or closing could not stop it).
  const start: Service["start"] = (options) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const entry = yield* restore(Effect.flatMap(
          Scope.extend(opener.open(options), scope),
          (opened) => Effect.map(serve(opened, scope), (entry) => ({ ...entry, warnings: opened.warnings }))
        )).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
        const added = yield* Ref.modify(entries, (map) => {
          if (map.has(entry.served.sessionId)) return [false, map] as const
          return [true, new Map(map).set(entry.served.sessionId, entry)] as const
        })
        if (!added) {
          yield* entry.close
          return yield* new RuntimeProtocol.SessionAlreadyOpen({ sessionId: entry.served.sessionId })
        }
        return { served: entry.served, warnings: entry.warnings }
      })
    )

  return {
    start,
    get: (sessionId) =>
      Effect.flatMap(Ref.get(entries), (map) => {
        const entry = map.get(sessionId)
        return entry === undefined
          ? Effect.fail(new RuntimeProtocol.SessionNotFound({ sessionId }))
          : Effect.succeed(entry.served)
      }),
    list: Effect.map(Ref.get(entries), (map) => [...map.values()].map((entry) => entry.served)),
    cancelled: (served, turnIds, reason) =>
      Effect.forEach(
        turnIds,
        (turnId) => PubSub.publish(served.events, RuntimeProtocol.Cancelled.make({ turnId, reason })),
        { discard: true }
      ),
    close: (sessionId) =>
      Effect.flatMap(take(sessionId), (entry) =>
        entry === undefined ? Effect.fail(new RuntimeProtocol.SessionNotFound({ sessionId })) : entry.close),
    closeAllWhenIdle: Effect.gen(function*() {
      const map = yield* Ref.get(entries)
      yield* Effect.forEach(map.values(), (entry) => entry.served.runtime.idle, { discard: true, concurrency: "unbounded" })
      yield* closeAll
    })
  }
})

/** @category Layers */
export const layer: Layer.Layer<Sessions, never, SessionOpener> = Layer.scoped(Sessions, make)
