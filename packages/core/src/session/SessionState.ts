/**
 * The per-conversation state, in `Ref`s, provided through Context to the turn loop, its stages and
 * tools. Nothing here is global: two sessions in one process share nothing.
 *
 * @since 0.1.0
 */
import type * as Action from "../action/Action.js"
import type * as Admission from "../admission/Admission.js"
import type * as Goal from "../goal/Goal.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Message } from "../message/Message.js"
import type * as Thinking from "../model/Thinking.js"
import * as StageMemory from "../turn/StageMemory.js"
import type { PerModel } from "./TokenUsage.js"

/** A tool call the permission system did not allow. @category Models */
export interface PermissionDenial {
  readonly tool_name: string
  readonly tool_use_id: string
  readonly tool_input: unknown
}

/** Where a task of the session's task list stands (Claude Code's `TodoWrite` statuses). @category Models */
export type TodoStatus = "pending" | "in_progress" | "completed"

/**
 * One task of the session's task list: what to do (`content`, imperative: "Run the tests") and how
 * it reads while under way (`activeForm`: "Running the tests").
 *
 * @category Models
 */
export interface Todo {
  readonly content: string
  readonly status: TodoStatus
  readonly activeForm: string
}

/** @category Models */
export interface Service {
  readonly sessionId: string
  /** The conversation as the model sees it (after compaction), in order. */
  readonly messages: Ref.Ref<ReadonlyArray<Message>>
  /** Token totals per model, over the whole session. */
  readonly usage: Ref.Ref<PerModel>
  /** Model requests made over the session. */
  readonly turnCount: Ref.Ref<number>
  /** Time spent waiting on the API, over the session (ms). */
  readonly apiDurationMs: Ref.Ref<number>
  /** Every decision that was not "allow", in order. */
  readonly permissionDenials: Ref.Ref<ReadonlyArray<PermissionDenial>>
  /** Files read (or written) in this session: absolute path → the file's mtime (ms) at that moment. */
  readonly fileState: Ref.Ref<ReadonlyMap<string, number>>
  /** The shell's working directory after the last Bash call (it carries over between calls). */
  readonly shellCwd: Ref.Ref<string | undefined>
  /** The session's task list, as the model last wrote it with `TodoWrite` (empty until then). */
  readonly todos: Ref.Ref<ReadonlyArray<Todo>>
  /**
   * The model of the session's current model call, set by the turn loop as each call begins (a
   * fallback model once a turn has switched to it; `undefined` before the first turn). Subagents
   * inherit it.
   */
  readonly model: Ref.Ref<string | undefined>
  /** The thinking setting of the session's current model call, set with `model`; subagents inherit it. */
  readonly thinking: Ref.Ref<Thinking.Setting | undefined>
  /** The session's persistent goal, if one is set (`/goal`; the model ends it with `update_goal`). */
  readonly goal: Ref.Ref<Goal.Goal | undefined>
  /** The inputs waiting for their turn, as the runtime last saved them (restored after a restart). */
  readonly queued: Ref.Ref<ReadonlyArray<Admission.Saved>>
  /** What happened to the session's pending actions, in order (folded: what is still pending). */
  readonly actionLog: Ref.Ref<ReadonlyArray<Action.Event>>
  /**
   * The conversation of a turn a crash left open, as the transcript left it (see `DurableTurn`),
   * until the session's runtime takes it up and runs the turn on.
   */
  readonly openTurn: Ref.Ref<ReadonlyArray<Message> | undefined>
  /** What the pipeline's stages remember of this conversation (dropped with the session). */
  readonly stageMemory: StageMemory.StageMemory
}

/** @category Context */
export class SessionState extends Context.Tag("@keel/core/SessionState")<SessionState, Service>() {}

/** Fresh state for a session, optionally starting from earlier messages. @category Constructors */
export const make = (sessionId: string, messages: ReadonlyArray<Message> = []): Effect.Effect<Service> =>
  Effect.gen(function*() {
    return SessionState.of({
      sessionId,
      messages: yield* Ref.make(messages),
      usage: yield* Ref.make<PerModel>(new Map()),
      turnCount: yield* Ref.make(0),
      apiDurationMs: yield* Ref.make(0),
      permissionDenials: yield* Ref.make<ReadonlyArray<PermissionDenial>>([]),
      fileState: yield* Ref.make<ReadonlyMap<string, number>>(new Map()),
      shellCwd: yield* Ref.make<string | undefined>(undefined),
      todos: yield* Ref.make<ReadonlyArray<Todo>>([]),
      model: yield* Ref.make<string | undefined>(undefined),
      thinking: yield* Ref.make<Thinking.Setting | undefined>(undefined),
      goal: yield* Ref.make<Goal.Goal | undefined>(undefined),
      queued: yield* Ref.make<ReadonlyArray<Admission.Saved>>([]),
      actionLog: yield* Ref.make<ReadonlyArray<Action.Event>>([]),
      openTurn: yield* Ref.make<ReadonlyArray<Message> | undefined>(undefined),
      stageMemory: yield* StageMemory.make
    })
  })
