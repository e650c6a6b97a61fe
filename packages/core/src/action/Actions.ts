/**
 * Ask → respond: the one place where anything that needs an answer from outside waits for it. A
 * turn's permission ask, `AskUserQuestion` and an MCP server's elicitation each become a pending
 * action with an id (`ask`), listed by `pending` and announced to subscribers (`subscribe`); the
 * answer comes back through one `respond(actionId, answer)`, whoever fronts the runtime (the REPL,
 * a stream-json host's `control_response`, `query()`'s `canUseTool`, an RPC client).
 *
 * The wait is the turn's: interrupting the turn (cancelling it, a `now` input, Ctrl+C) interrupts
 * the ask, and the action is cancelled. With a `timeout`, an action nobody answers in time is
 * cancelled too, and the ask gets the refusal (`deny` for a permission, `cancel` for an
 * elicitation), as it does when the action is cancelled by `cancel`. Actions restored from a transcript after a restart (`restore`) are pending with no
 * turn waiting yet: when the resumed turn asks again for the same tool call it takes the restored
 * action (same id) instead of opening another, and an answer given before that is kept for it.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import { Ids } from "../ids/Ids.js"
import * as Action from "./Action.js"

/** `respond` named an action that is not pending (answered, cancelled, or never opened). @category Errors */
export class ActionNotFound extends Schema.TaggedError<ActionNotFound>("@keel/Actions/ActionNotFound")(
  "ActionNotFound",
  { actionId: Schema.String }
) {
  override get message() {
    return `No action ${this.actionId} is pending: it was answered or cancelled already, or never opened.`
  }
}

/** `respond` gave an answer that does not fit the action's kind. @category Errors */
export class InvalidAnswer extends Schema.TaggedError<InvalidAnswer>("@keel/Actions/InvalidAnswer")(
  "InvalidAnswer",
  { actionId: Schema.String, kind: Schema.String, problem: Schema.String }
) {
  override get message() {
    return `The answer to ${this.kind} action ${this.actionId} is not valid: ${this.problem}`
  }
}

/**
 * The turn whose fiber asks: set by the runtime around each turn, inherited by the fibers the turn
 * forks (its tool calls), so an action knows which turn it pauses.
 *
 * @category References
 */
export const currentTurn: FiberRef.FiberRef<string | null> = FiberRef.unsafeMake<string | null>(null)

/** @category Models */
export interface Service {
  /** Opens an action for `request` and waits for its answer (see the module doc for cancellation). */
  readonly ask: <R extends Action.Request>(request: R) => Effect.Effect<Action.AnswerOf<R>>
  /** Answers a pending action; the answer is validated against the action's kind. */
  readonly respond: (actionId: string, answer: unknown) => Effect.Effect<void, ActionNotFound | InvalidAnswer>
  /** What waits for an answer, the oldest first. */
  readonly pending: Effect.Effect<ReadonlyArray<Action.Pending>>
  /**
   * The actions' events from now on, after an `opened` for each action already pending (taken
   * atomically: none is missed or seen twice). Ends when the scope closes.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<Action.Event>, never, Scope.Scope>
  /** Puts actions left pending by an earlier process back (no turn waits for them yet). */
  readonly restore: (pending: ReadonlyArray<Action.Pending>) => Effect.Effect<void>
  /** Cancels the pending actions of `turnId` (a cancelled turn's), with `reason`. */
  readonly cancelTurn: (turnId: string, reason: string) => Effect.Effect<void>
  /**
   * Cancels one pending action, with `reason`; false if it is not pending. A turn waiting for it
   * gets the refusal (`deny`, or `cancel` for an elicitation) and goes on.
   */
  readonly cancel: (actionId: string, reason: string) => Effect.Effect<boolean>
}

/** @category Context */
export class Actions extends Context.Tag("@keel/core/Actions")<Actions, Service>() {}

/** Options of {@link make}. @category Models */
export interface Options {
  /** How long an action may wait for its answer; default: until answered or its turn is cancelled. */
  readonly timeout?: Duration.DurationInput | undefined
}

interface Open {
  readonly action: Action.Pending
  /** The turn waiting for the answer; none for a restored action until its turn asks again. */
  readonly waiter: Deferred.Deferred<Action.Answer> | undefined
}

interface State {
  readonly open: ReadonlyMap<string, Open>
  /** Answers given to restored actions before their turn asked again, by tool use id. */
  readonly early: ReadonlyMap<string, Action.Answer>
}

/** The answer an unanswered action gets when it is cancelled by its timeout. */
const refusal = (request: Action.Request, why: string): Action.Answer =>
  request.kind === "permission"
    ? { behavior: "deny", message: `Permission to use ${request.toolName} was denied: ${why}.` }
    : { action: "cancel" }

const without = <K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> => {
  const next = new Map(map)
  next.delete(key)
  return next
}

const withEntry = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> => new Map(map).set(key, value)

/** The restored action a permission request takes over (same tool call), if any. */
const restoredFor = (state: State, request: Action.Request): Open | undefined => {
  if (request.kind !== "permission") return undefined
  for (const open of state.open.values()) {
    const r = open.action.request
    if (open.waiter === undefined && r.kind === "permission" && r.toolUseId === request.toolUseId) return open
  }
  return undefined
}

/** An actions service (ids from `Ids`). @category Constructors */
export const make = (options: Options = {}): Effect.Effect<Service, never, Ids> =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const state = yield* SynchronizedRef.make<State>({ open: new Map(), early: new Map() })
    const hub = yield* PubSub.unbounded<Action.Event>()

    /** Closes `id` (under the lock): publishes `event`, completes its waiter with `answer`. */
    const close = (id: string, event: Action.Event, answer: Action.Answer | undefined) =>
      SynchronizedRef.modifyEffect(state, (s) => {
        const open = s.open.get(id)
        if (open === undefined) return Effect.succeed([false, s] as const)
        const next: State = { ...s, open: without(s.open, id) }
        return PubSub.publish(hub, event).pipe(
          Effect.zipRight(open.waiter !== undefined && answer !== undefined ? Deferred.succeed(open.waiter, answer) : Effect.void),
          Effect.as([true, next] as const)
        )
      })

    // A turn still waiting for a cancelled action gets the refusal.
    const cancel = (id: string, reason: string) =>
      Effect.flatMap(SynchronizedRef.get(state), (s) => {
        const open = s.open.get(id)
        return open === undefined
          ? Effect.succeed(false)
          : close(id, { event: "cancelled", id, reason }, refusal(open.action.request, reason))
      })

    const ask = <R extends Action.Request>(request: R): Effect.Effect<Action.AnswerOf<R>> =>
      Effect.gen(function*() {
        const turnId = yield* FiberRef.get(currentTurn)
        const openedAt = yield* Clock.currentTimeMillis
        const waiter = yield* Deferred.make<Action.Answer>()
        type Opened = { readonly answered: Action.Answer } | { readonly id: string }
        const opened = yield* SynchronizedRef.modifyEffect(state, (s): Effect.Effect<readonly [Opened, State]> => {
          const early = request.kind === "permission" ? s.early.get(request.toolUseId) : undefined
          if (early !== undefined && request.kind === "permission") {
            return Effect.succeed([{ answered: early } as const, { ...s, early: without(s.early, request.toolUseId) }] as const)
          }
          const restored = restoredFor(s, request)
          if (restored !== undefined) {
            const id = restored.action.id
            return Effect.succeed([{ id } as const, { ...s, open: withEntry(s.open, id, { ...restored, waiter }) }] as const)
          }
          const action: Action.Pending = { id: ids.uuid(), turnId, request, openedAt }
          return Effect.as(
            PubSub.publish(hub, { event: "opened", action }),
            [{ id: action.id } as const, { ...s, open: withEntry(s.open, action.id, { action, waiter }) }] as const
          )
        })
        if ("answered" in opened) return opened.answered as Action.AnswerOf<R>
        const answered = Deferred.await(waiter)
        const bounded = options.timeout === undefined ? answered : answered.pipe(
          Effect.timeoutTo({
            duration: options.timeout,
            onSuccess: Option.some,
            onTimeout: () => Option.none<Action.Answer>()
          }),
          Effect.flatMap(Option.match({
            onSome: Effect.succeed,
            onNone: () => {
              const why = `nobody answered within ${Duration.format(options.timeout!)}`
              return Effect.as(cancel(opened.id, why), refusal(request, why))
            }
          }))
        )
        return (yield* bounded.pipe(
          Effect.onInterrupt(() => cancel(opened.id, "its turn was interrupted"))
        )) as Action.AnswerOf<R>
      })

    const respond = (actionId: string, answer: unknown) =>
      Effect.gen(function*() {
        const open = (yield* SynchronizedRef.get(state)).open.get(actionId)
        if (open === undefined) return yield* new ActionNotFound({ actionId })
        const request = open.action.request
        const decoded: Action.Answer = yield* Action.decodeAnswer(request, answer).pipe(
          Effect.mapError((e) => new InvalidAnswer({ actionId, kind: request.kind, problem: e.message }))
        )
        // A restored action with no turn waiting yet keeps its answer for the turn that asks again.
        if (open.waiter === undefined && request.kind === "permission") {
          yield* SynchronizedRef.update(state, (s) => ({ ...s, early: withEntry(s.early, request.toolUseId, decoded) }))
        }
        const closed = yield* close(actionId, { event: "resolved", id: actionId, answer: decoded }, decoded)
        if (!closed) return yield* new ActionNotFound({ actionId })
      })

    return Actions.of({
      ask,
      respond,
      pending: Effect.map(SynchronizedRef.get(state), (s) => [...s.open.values()].map((o) => o.action)),
      subscribe: SynchronizedRef.modifyEffect(state, (s) =>
        Effect.map(PubSub.subscribe(hub), (subscription) => {
          const opened = [...s.open.values()].map((o): Action.Event => ({ event: "opened", action: o.action }))
          return [Stream.concat(Stream.fromIterable(opened), Stream.fromQueue(subscription)), s] as const
        })),
      restore: (pending) =>
        SynchronizedRef.updateEffect(state, (s) => {
          const open = new Map(s.open)
          for (const action of pending) open.set(action.id, { action, waiter: undefined })
          return Effect.as(
            PubSub.publishAll(hub, pending.map((action): Action.Event => ({ event: "opened", action }))),
            { ...s, open }
          )
        }),
      cancel,
      cancelTurn: (turnId, reason) =>
        Effect.flatMap(SynchronizedRef.get(state), (s) =>
          Effect.forEach(
            [...s.open.values()].filter((o) => o.action.turnId === turnId),
            (o) => cancel(o.action.id, reason),
            { discard: true }
          ))
    })
  })

/** The actions layer. @category Layers */
export const layer = (options: Options = {}): Layer.Layer<Actions, never, Ids> => Layer.effect(Actions, make(options))

/**
 * How long an action may wait for its answer, from `KEEL_ASK_TIMEOUT_MS` (unset: until answered or
 * its turn is cancelled, as in Claude Code).
 *
 * @category Config
 */
export const timeoutConfig: Config.Config<Option.Option<Duration.Duration>> = Config.option(
  Config.integer("KEEL_ASK_TIMEOUT_MS").pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.map(Duration.millis)
  )
)

/** The actions layer with its timeout from {@link timeoutConfig}. @category Layers */
export const layerConfig: Layer.Layer<Actions, ConfigError.ConfigError, Ids> = Layer.unwrapEffect(
  Effect.map(timeoutConfig, (timeout) => layer({ timeout: Option.getOrUndefined(timeout) }))
)
