/**
 * A session's memory for the stages of its pipeline. A stage instance serves every session of a
 * process (one pipeline per runtime), so what it remembers of a conversation (the tool results it
 * saved, the reads it indexed) lives here, in the session's state, one slot per stage: made on the
 * stage's first use in the session, dropped with the session. A process that hosts many sessions
 * in turn keeps nothing of those that ended.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

/**
 * The key of a slot: a stage's id (`Stage.id(name)`), or any object, compared by identity (so two
 * stages that share a name keep apart).
 *
 * @category Models
 */
export type Id = object

/** A session's stage memory. @category Models */
export interface StageMemory {
  /**
   * The slot of the stage `id` in this session: its state, made by `init` on first use. The state is
   * the stage's own, updated in place (one fiber runs a session's pipeline at a time).
   */
  readonly slot: <A>(id: Id, init: () => A) => Effect.Effect<A>
  /** How many stages hold state in this session. */
  readonly size: Effect.Effect<number>
}

/** An empty memory, for a new session. @category Constructors */
export const make: Effect.Effect<StageMemory> = Effect.map(
  Ref.make<ReadonlyMap<Id, unknown>>(new Map()),
  (slots) => ({
    slot: <A>(id: Id, init: () => A) =>
      Ref.modify(slots, (map): readonly [A, ReadonlyMap<Id, unknown>] => {
        if (map.has(id)) return [map.get(id) as A, map]
        const state = init()
        return [state, new Map(map).set(id, state)]
      }),
    size: Effect.map(Ref.get(slots), (map) => map.size)
  })
)

/**
 * The state of stage `id` for a stage run: the session's slot when the run has the session's
 * memory, else a fresh state that lives for this run only (a stage run outside any session).
 *
 * @category Accessors
 */
export const slotOf = <A>(memory: StageMemory | undefined, id: Id, init: () => A): Effect.Effect<A> =>
  memory === undefined ? Effect.sync(init) : memory.slot(id, init)
