/**
 * What a runtime takes up when it starts on a saved session (`SessionRuntime.resume`), the same
 * way for `keel --resume` and any other start: the pending actions the transcript left (listed
 * again, same ids), a turn cut while it waited for one (it runs on from its tool calls, first:
 * see `PendingTools`) or left open by a crash (`DurableTurn`), then the inputs that were queued.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Action from "../action/Action.js"
import type { Actions } from "../action/Actions.js"
import * as Admission from "../admission/Admission.js"
import { AssistantMessage } from "../message/Message.js"
import type * as Session from "../session/Session.js"
import * as PendingTools from "./PendingTools.js"
import type * as SessionFacts from "./SessionFacts.js"

/** What a resume took up. @category Models */
export interface Resumed {
  /** The actions still waiting for an answer. */
  readonly pending: ReadonlyArray<Action.Pending>
  /** The id of the turn that runs on, if one was cut while it waited for permission or by a crash. */
  readonly resumedTurn: string | undefined
  /** The ids of the inputs queued again. */
  readonly queued: ReadonlyArray<string>
}

/** What resuming needs from the runtime. @category Models */
export interface Deps {
  readonly session: Session.Service
  readonly actions: Actions["Type"]
  readonly facts: SessionFacts.SessionFacts
  /** Queues an entry; `false` when the queue is full. */
  readonly enqueue: (item: Admission.Queued) => Effect.Effect<boolean>
  readonly newId: () => string
}

/** Takes up what the session's transcript left. @category Running */
export const resume = (deps: Deps): Effect.Effect<Resumed> =>
  Effect.gen(function*() {
    const state = yield* deps.session.state
    const pending = Action.pendingAfter(yield* Ref.get(state.actionLog))
    yield* deps.actions.restore(pending)
    // The cut turn runs on from the conversation as it was before any "interrupted" repair: one
    // that waited for permission, else one a crash left open (the session's journal says so).
    const cut = PendingTools.find(yield* Ref.get(state.messages), pending)
    const open = yield* Ref.getAndSet(state.openTurn, undefined)
    const history = cut?.history ?? open
    const queuedAt = yield* Clock.currentTimeMillis
    let resumedTurn: string | undefined
    if (history !== undefined) {
      yield* Ref.set(state.messages, history)
      const last = history.at(-1)
      const uses = last instanceof AssistantMessage ? last.toolUses : []
      const preview = uses.length > 0 ? `resumed: ${uses.map((u) => u.name).join(", ")}` : "resumed: the model request a restart cut"
      const id = cut?.turnId ?? deps.newId()
      if (yield* deps.enqueue({ id, priority: "now", input: preview, preview, queuedAt, kind: "resume" })) resumedTurn = id
      else yield* Effect.logWarning("the cut turn was not resumed: the queue is full")
    }
    const saved = yield* deps.facts.takeLeftQueued
    for (const q of saved) {
      if (!(yield* deps.enqueue({ ...q, preview: Admission.preview(q.input), kind: "input" }))) {
        yield* Effect.logWarning("a queued input was dropped on resume: the queue is full")
      }
    }
    return { pending, resumedTurn, queued: saved.map((q) => q.id) }
  })
