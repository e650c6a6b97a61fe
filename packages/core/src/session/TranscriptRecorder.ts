/**
 * The writer of one session's transcript. The session calls {@link Recorder.checkpoint} when its
 * state may have changed (the prompt added, a chunk of turn events with answers, results or stage
 * reports, the end of a turn, `/compact`); the recorder compares the session's `SessionState` with
 * what the file already holds and appends only the difference:
 *
 * - the conversation: new messages as `user`/`assistant` entries, or one `rewrite` entry when a
 *   stage replaced it (`Transcript.diff`), named after the stage reports noted since;
 * - `model` when the model of the calls changed, `usage` when the token totals changed,
 *   `file_state` with the files read or written since the last one;
 * - the runtime's facts: `action` for each new event of a pending action, `goal` when the goal
 *   changed, `queue` when the queued inputs changed.
 *
 * - the turns' envelopes noted since ({@link Recorder.envelope}): a `system_prompt` entry the first
 *   time the file meets a prompt, then the `envelope`, after the user message it names.
 *
 * Everything a checkpoint writes goes out in one append, and the recorder's idea of the file moves
 * on only once the append succeeded; a checkpoint with `sync` then flushes the file to disk. A
 * process killed at any moment loses at most what had not reached a checkpoint: the message in
 * flight. Writing never fails a turn: the first failure stops the recorder (so a half-written batch
 * is never followed by more) and is returned as a warning for the session to show.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Message } from "../message/Message.js"
import * as FileState from "../tool/FileState.js"
import type { StageReport } from "../turn/Stage.js"
import type { Service as SessionStateService } from "./SessionState.js"
import type { Service as Store } from "./SessionStore.js"
import type * as Admission from "../admission/Admission.js"
import type * as Goal from "../goal/Goal.js"
import type { PerModel } from "./TokenUsage.js"
import * as Transcript from "./Transcript.js"
import * as TranscriptEntry from "./TranscriptEntry.js"
import type { SessionExists, TranscriptIoError } from "./TranscriptError.js"
import * as TurnEnvelope from "./TurnEnvelope.js"

/** @category Models */
export interface Recorder {
  /** The transcript file, when the session is persisted. */
  readonly file: string | undefined
  /** Notes a stage report: the next rewrite names its stage (and carries its compaction). */
  readonly note: (report: StageReport) => void
  /**
   * Appends what changed since the last checkpoint; with `sync`, then flushes the file to disk.
   * Answers warnings for people (empty when all went well).
   */
  readonly checkpoint: (options?: { readonly sync?: boolean }) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Notes a turn's envelope, written by the next checkpoint after the entries it diffs (the user
   * message first), with the uuid of `message`'s entry; its system prompt is written before it
   * when the file does not hold that prompt yet (once per file).
   */
  readonly envelope: (
    envelope: TurnEnvelope.TurnEnvelope,
    prompt: TurnEnvelope.SystemPromptRecord,
    message: Message
  ) => void
}

/** A recorder that writes nothing (no store, or `persist: false`). @category Constructors */
export const disabled: Recorder = {
  file: undefined,
  note: () => {},
  checkpoint: () => Effect.succeed([]),
  envelope: () => {}
}

/** Options of {@link make}. @category Models */
export interface Options {
  readonly store: Store
  readonly cwd: string
  readonly sessionId: string
  /** The state whose changes are recorded. */
  readonly state: SessionStateService
  /** The session's own model, as `/model` last set it (a call on another one is a fallback). */
  readonly primaryModel: Effect.Effect<string>
  /**
   * The transcript this session continues (`--resume`): the file already holds its messages and
   * totals, as they are in `state` now. Without it the session writes a new file, exclusively.
   */
  readonly continues?: Transcript.Loaded | undefined
  /** Written first in a new file: the session is a fork of, or a `/clear` in, session `from`. */
  readonly origin?: { readonly source: "fork" | "clear"; readonly from: string } | undefined
  /** A new entry id (the session's `Ids`). */
  readonly uuid: () => string
  /** The uuid of a message's entry, its SDK message's too (`MessageIds`); default a new one. */
  readonly messageUuid?: ((message: Message) => string) | undefined
}

/**
 * What a recorder knows of its file, changed only under its lock after a successful append, and
 * what it noted since (stage reports, for the next rewrite).
 */
interface State {
  /** The conversation the file describes. */
  persisted: ReadonlyArray<Message>
  /** The last entry's uuid: the next entry's `parentUuid`. */
  lastUuid: string | null
  lastUsage: PerModel
  lastFiles: ReadonlyMap<string, number>
  lastModel: string | undefined
  /** The runtime's facts the file holds: the goal and queue last written, the action events written. */
  lastGoal: Goal.Goal | undefined
  lastQueued: ReadonlyArray<Admission.Saved>
  actionsWritten: number
  /** The file exists (it is created, exclusively, by the first append otherwise). */
  created: boolean
  /** A continued file's tail, until the first append has dealt with it. */
  tail: Transcript.Tail | undefined
  /** The origin entry, until the first append has written it. */
  origin: Options["origin"]
  /** Appended to since the last flush to disk. */
  dirty: boolean
  /** A write failed: the recorder writes nothing more. */
  stopped: boolean
  /** The system prompts the file holds, by hash. */
  readonly prompts: Set<string>
  /** The envelopes noted since the last append, with their prompts and user messages. */
  readonly turns: Array<Turn>
  /** The uuid of each message's entry (those written by this recorder). */
  readonly uuids: WeakMap<Message, string>
  /** The stages reported since the last rewrite, and the last compaction among them. */
  stages: Array<string>
  compaction: StageReport["compaction"]
}

/** A turn's envelope, waiting for the next append. */
interface Turn {
  readonly envelope: TurnEnvelope.TurnEnvelope
  readonly prompt: TurnEnvelope.SystemPromptRecord
  readonly message: Message
}

/** What one checkpoint appends, and the state it appends it for. */
interface Batch {
  readonly out: ReadonlyArray<TranscriptEntry.Payload>
  readonly messages: ReadonlyArray<Message>
  readonly usage: PerModel
  readonly files: ReadonlyMap<string, number>
  readonly model: string | undefined
  readonly rewrite: boolean
  readonly goal: Goal.Goal | undefined
  readonly queued: ReadonlyArray<Admission.Saved>
  readonly actionsWritten: number
}

/** The `rewrite` entry for a changed conversation, named after the stages reported since the last one. */
const rewritePayload = (
  change: Extract<Transcript.Change, { readonly _tag: "Rewrite" }>,
  stages: ReadonlyArray<string>,
  compaction: StageReport["compaction"]
): TranscriptEntry.Payload => ({
  type: "rewrite",
  trigger: stages.length > 0 ? [...new Set(stages)].join(",") : "unreported",
  ...(compaction !== undefined
    ? {
      compaction: {
        trigger: compaction.trigger,
        preTokens: compaction.preTokens,
        postTokens: compaction.postTokens,
        durationMs: compaction.durationMs
      }
    }
    : {}),
  from: change.from,
  length: change.length,
  ops: change.ops
})

/** The files of `files` whose mtime is not the one in `last`, if any. */
const changedFiles = (
  files: ReadonlyMap<string, number>,
  last: ReadonlyMap<string, number>
): Record<string, number> | undefined => {
  if (files === last) return undefined
  const changed: Record<string, number> = {}
  let anyFile = false
  // A later version of the same file state: only the paths recorded since (no walk of every file).
  const since = FileState.changedSince(files, last)
  if (since !== undefined) {
    for (const path of since) {
      changed[path] = files.get(path)!
      anyFile = true
    }
    return anyFile ? changed : undefined
  }
  // An older version of a lineage no longer reads as it was: every path is written again.
  const before = FileState.readable(last) ? last : new Map<string, number>()
  for (const [path, mtime] of files) {
    if (before.get(path) !== mtime) {
      changed[path] = mtime
      anyFile = true
    }
  }
  return anyFile ? changed : undefined
}

/** What changed in the session's state since the file last described it, as the entries to append. */
const batch = (options: Options, recorder: State): Effect.Effect<Batch> =>
  Effect.gen(function*() {
    const { state } = options
    const { origin } = recorder
    const out: Array<TranscriptEntry.Payload> = []
    if (origin !== undefined) out.push({ type: "origin", source: origin.source, from: origin.from })
    const model = yield* Ref.get(state.model)
    if (model !== undefined && model !== recorder.lastModel) {
      out.push({ type: "model", model, fallback: model !== (yield* options.primaryModel) })
    }
    const messages = yield* Ref.get(state.messages)
    const change = Transcript.diff(recorder.persisted, messages)
    if (change._tag === "Append") {
      for (const m of change.messages) out.push(TranscriptEntry.messagePayload(m))
    } else if (change._tag === "Rewrite") {
      out.push(rewritePayload(change, recorder.stages, recorder.compaction))
    }
    const usage = yield* Ref.get(state.usage)
    if (usage !== recorder.lastUsage && usage.size > 0) {
      out.push({ type: "usage", models: Object.fromEntries(usage) })
    }
    const files = yield* Ref.get(state.fileState)
    const changed = changedFiles(files, recorder.lastFiles)
    if (changed !== undefined) out.push({ type: "file_state", files: changed })
    const actions = yield* Ref.get(state.actionLog)
    for (const action of actions.slice(recorder.actionsWritten)) out.push({ type: "action", action })
    const goal = yield* Ref.get(state.goal)
    if (goal !== recorder.lastGoal) out.push({ type: "goal", goal: goal ?? null })
    const queued = yield* Ref.get(state.queued)
    if (queued !== recorder.lastQueued && (queued.length > 0 || recorder.lastQueued.length > 0)) {
      out.push({ type: "queue", queue: queued })
    }
    return {
      out,
      messages,
      usage,
      files,
      model,
      rewrite: change._tag === "Rewrite",
      goal,
      queued,
      actionsWritten: actions.length
    }
  })

/** `payloads` as entries chained from `parent`: a message not in `written` with its `messageUuid`, others a new uuid. */
const stamp = (
  options: Options,
  payloads: ReadonlyArray<TranscriptEntry.Payload>,
  parent: string | null,
  timestamp: string,
  written: WeakMap<Message, string>
): { readonly entries: ReadonlyArray<TranscriptEntry.Entry>; readonly lastUuid: string | null } => {
  const { cwd, sessionId } = options
  let previous = parent
  const entries = payloads.map((payload) => {
    const uuid = (payload.type === "user" || payload.type === "assistant") && options.messageUuid !== undefined &&
        !written.has(payload.message)
      ? options.messageUuid(payload.message)
      : options.uuid()
    const entry = {
      ...payload,
      uuid,
      parentUuid: previous,
      sessionId,
      timestamp,
      cwd,
      version: TranscriptEntry.VERSION
    } as TranscriptEntry.Entry
    previous = uuid
    return entry
  })
  return { entries, lastUuid: previous }
}

/**
 * The entries of the turns noted: each one's system prompt unless the file holds it (or an earlier
 * turn of these writes it), then its envelope, naming the entry of its user message.
 */
const turnPayloads = (
  recorder: State,
  turns: ReadonlyArray<Turn>,
  written: ReadonlyMap<Message, string>
): ReadonlyArray<TranscriptEntry.Payload> => {
  const prompts = new Set(recorder.prompts)
  return turns.flatMap(({ envelope, message, prompt }): Array<TranscriptEntry.Payload> => {
    const out: Array<TranscriptEntry.Payload> = []
    if (!prompts.has(prompt.hash)) {
      prompts.add(prompt.hash)
      out.push({ type: "system_prompt", ...prompt })
    }
    const entry = written.get(message) ?? recorder.uuids.get(message)
    out.push({ type: "envelope", ...(entry === undefined ? envelope : TurnEnvelope.withUserEntry(envelope, entry)) })
    return out
  })
}

/** The uuid of each message entry among `entries`. */
const messageUuids = (entries: ReadonlyArray<TranscriptEntry.Entry>): Map<Message, string> => {
  const out = new Map<Message, string>()
  for (const entry of entries) if (entry.type === "user" || entry.type === "assistant") out.set(entry.message, entry.uuid)
  return out
}

/**
 * Appends what changed, in one append (cutting a continued file's truncated tail first); the
 * recorder's idea of the file moves on only once the append succeeded.
 */
const write = (options: Options, recorder: State): Effect.Effect<void, TranscriptIoError | SessionExists> =>
  Effect.gen(function*() {
    const { continues, cwd, sessionId, store } = options
    const next = yield* batch(options, recorder)
    const turns = recorder.turns.slice()
    if (next.out.length === 0 && turns.length === 0) return
    const timestamp = new Date(yield* Clock.currentTimeMillis).toISOString()
    const changes = stamp(options, next.out, recorder.lastUuid, timestamp, recorder.uuids)
    const written = messageUuids(changes.entries)
    const turnEntries = stamp(options, turnPayloads(recorder, turns, written), changes.lastUuid, timestamp, recorder.uuids)
    const entries = [...changes.entries, ...turnEntries.entries]
    const lastUuid = turnEntries.lastUuid
    if (recorder.tail?.truncated === true && continues !== undefined) yield* store.cutTail(cwd, continues)
    yield* store.append(cwd, sessionId, entries, {
      create: !recorder.created,
      newlineFirst: recorder.tail?.missingNewline === true
    })
    recorder.created = true
    recorder.tail = undefined
    recorder.origin = undefined
    recorder.dirty = true
    recorder.persisted = next.messages
    recorder.lastUuid = lastUuid
    recorder.lastUsage = next.usage
    recorder.lastFiles = next.files
    recorder.lastModel = next.model ?? recorder.lastModel
    recorder.lastGoal = next.goal
    recorder.lastQueued = next.queued
    recorder.actionsWritten = next.actionsWritten
    recorder.turns.splice(0, turns.length)
    for (const turn of turns) recorder.prompts.add(turn.prompt.hash)
    for (const [message, uuid] of written) recorder.uuids.set(message, uuid)
    if (next.rewrite) {
      recorder.stages = []
      recorder.compaction = undefined
    }
  })

/**
 * One checkpoint (run under the recorder's lock): writes what changed, then flushes with `sync`. A
 * failed write stops the recorder; every failure is a warning, never an error.
 */
const checkpoint = (
  options: Options,
  recorder: State,
  checkpointOptions: { readonly sync?: boolean }
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    if (recorder.stopped) return []
    const written = yield* Effect.either(Effect.uninterruptible(write(options, recorder)))
    if (written._tag === "Left") {
      recorder.stopped = true
      return [`could not save the session: ${written.left.message}; the session goes on without saving`]
    }
    if (checkpointOptions.sync !== true || !recorder.dirty) return []
    const synced = yield* Effect.either(options.store.sync(options.cwd, options.sessionId))
    if (synced._tag === "Left") return [`could not flush the session to disk: ${synced.left.message}`]
    recorder.dirty = false
    return []
  })

/**
 * A recorder for a session. When continuing a file its current state must already be in `state`
 * (messages as loaded, usage, file state), so that only later changes are written.
 *
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<Recorder> =>
  Effect.gen(function*() {
    const { continues, cwd, sessionId, state, store } = options
    const file = store.fileOf(cwd, sessionId)
    const lock = yield* Effect.makeSemaphore(1)
    const recorder: State = {
      persisted: continues?.messages ?? [],
      lastUuid: continues?.lastUuid ?? null,
      lastUsage: continues !== undefined ? yield* Ref.get(state.usage) : new Map(),
      lastFiles: continues !== undefined ? yield* Ref.get(state.fileState) : new Map(),
      lastModel: continues?.lastModel,
      // A continued file holds the facts restored into `state`; a new one holds none yet.
      lastGoal: continues !== undefined ? yield* Ref.get(state.goal) : undefined,
      lastQueued: continues !== undefined ? yield* Ref.get(state.queued) : [],
      actionsWritten: continues !== undefined ? (yield* Ref.get(state.actionLog)).length : 0,
      created: continues !== undefined,
      tail: continues?.tail,
      origin: options.origin,
      dirty: false,
      stopped: false,
      prompts: new Set(continues?.prompts.keys() ?? []),
      turns: [],
      uuids: new WeakMap(),
      stages: [],
      compaction: undefined
    }
    return {
      file,
      note: (report) => {
        recorder.stages.push(report.stage)
        if (report.compaction !== undefined) recorder.compaction = report.compaction
      },
      checkpoint: (checkpointOptions = {}) => lock.withPermits(1)(checkpoint(options, recorder, checkpointOptions)),
      envelope: (envelope, prompt, message) => {
        if (!recorder.stopped) recorder.turns.push({ envelope, prompt, message })
      }
    } satisfies Recorder
  })
