/**
 * The writer of one session's transcript. The session calls {@link Recorder.checkpoint} when its
 * state may have changed (the prompt added, a chunk of turn events with answers, results or stage
 * reports, the end of a turn, `/compact`); the recorder compares the session's `SessionState` with
 * what the file already holds and appends only the difference:
 *
 * - the conversation: new messages as `user`/`assistant` entries, or one `rewrite` entry when a
 *   stage replaced it (`Transcript.diff`), named after the stage reports noted since;
 * - `model` when the model of the calls changed, `usage` when the token totals changed,
 *   `file_state` with the files read or written since the last one.
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
import type { StageReport } from "../turn/Stage.js"
import type { Service as SessionStateService } from "./SessionState.js"
import type { Service as Store } from "./SessionStore.js"
import * as Transcript from "./Transcript.js"
import * as TranscriptEntry from "./TranscriptEntry.js"

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
}

/** A recorder that writes nothing (no store, or `persist: false`). @category Constructors */
export const disabled: Recorder = {
  file: undefined,
  note: () => {},
  checkpoint: () => Effect.succeed([])
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
}

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

    // The file as the recorder knows it; changed only under the lock, after a successful append.
    let persisted: ReadonlyArray<Message> = continues?.messages ?? []
    let lastUuid: string | null = continues?.lastUuid ?? null
    let lastUsage = continues !== undefined ? yield* Ref.get(state.usage) : new Map()
    let lastFiles: ReadonlyMap<string, number> = continues !== undefined ? yield* Ref.get(state.fileState) : new Map()
    let lastModel = continues?.lastModel
    let created = continues !== undefined
    let tail = continues?.tail
    let origin = options.origin
    let dirty = false
    let stopped = false
    let stages: Array<string> = []
    let compaction: StageReport["compaction"]

    const payloads = Effect.gen(function*() {
      const out: Array<TranscriptEntry.Payload> = []
      if (origin !== undefined) out.push({ type: "origin", source: origin.source, from: origin.from })
      const model = yield* Ref.get(state.model)
      if (model !== undefined && model !== lastModel) {
        out.push({ type: "model", model, fallback: model !== (yield* options.primaryModel) })
      }
      const messages = yield* Ref.get(state.messages)
      const change = Transcript.diff(persisted, messages)
      if (change._tag === "Append") {
        for (const m of change.messages) out.push(TranscriptEntry.messagePayload(m))
      } else if (change._tag === "Rewrite") {
        out.push({
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
      }
      const usage = yield* Ref.get(state.usage)
      if (usage !== lastUsage && usage.size > 0) {
        out.push({ type: "usage", models: Object.fromEntries(usage) })
      }
      const files = yield* Ref.get(state.fileState)
      const changed: Record<string, number> = {}
      let anyFile = false
      if (files !== lastFiles) {
        for (const [path, mtime] of files) {
          if (lastFiles.get(path) !== mtime) {
            changed[path] = mtime
            anyFile = true
          }
        }
      }
      if (anyFile) out.push({ type: "file_state", files: changed })
      return { out, messages, usage, files, model, rewrite: change._tag === "Rewrite" }
    })

    const write = Effect.gen(function*() {
      const next = yield* payloads
      if (next.out.length === 0) return
      const timestamp = new Date(yield* Clock.currentTimeMillis).toISOString()
      let parent = lastUuid
      const entries = next.out.map((payload) => {
        const uuid = options.uuid()
        const entry = {
          ...payload,
          uuid,
          parentUuid: parent,
          sessionId,
          timestamp,
          cwd,
          version: TranscriptEntry.VERSION
        } as TranscriptEntry.Entry
        parent = uuid
        return entry
      })
      if (tail?.truncated === true && continues !== undefined) yield* store.cutTail(cwd, continues)
      yield* store.append(cwd, sessionId, entries, { create: !created, newlineFirst: tail?.missingNewline === true })
      created = true
      tail = undefined
      origin = undefined
      dirty = true
      persisted = next.messages
      lastUuid = parent
      lastUsage = next.usage
      lastFiles = next.files
      lastModel = next.model ?? lastModel
      if (next.rewrite) {
        stages = []
        compaction = undefined
      }
    })

    const checkpoint = (checkpointOptions: { readonly sync?: boolean } = {}) =>
      lock.withPermits(1)(Effect.suspend(() => {
        if (stopped) return Effect.succeed([] as ReadonlyArray<string>)
        return Effect.gen(function*() {
          const written = yield* Effect.either(Effect.uninterruptible(write))
          if (written._tag === "Left") {
            stopped = true
            return [`could not save the session: ${written.left.message}; the session goes on without saving`]
          }
          if (checkpointOptions.sync !== true || !dirty) return []
          const synced = yield* Effect.either(store.sync(cwd, sessionId))
          if (synced._tag === "Left") return [`could not flush the session to disk: ${synced.left.message}`]
          dirty = false
          return []
        })
      }))

    return {
      file,
      note: (report) => {
        stages.push(report.stage)
        if (report.compaction !== undefined) compaction = report.compaction
      },
      checkpoint
    } satisfies Recorder
  })
