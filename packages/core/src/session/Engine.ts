/**
 * What the parts of a session share: its options and services, the current session (identity,
 * state, transcript recorder, `system`/`init`), held in one `Ref` so `/clear` replaces it whole, and
 * the small steps every way of answering a prompt uses (the opening messages, the cost so far, the
 * warnings about unpriced models).
 *
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Compactor } from "../context/Compactor.js"
import { windowFor } from "../context/TokenEstimate.js"
import type { CommandContext, Commands } from "../input/Commands.js"
import type * as Mentions from "../input/Mentions.js"
import type { Hooks } from "../hook/Hooks.js"
import type { Ids } from "../ids/Ids.js"
import type { ModelClient } from "../model/ModelClient.js"
import type * as Thinking from "../model/Thinking.js"
import type { Permissions } from "../permission/Permissions.js"
import type { ContextAssembly } from "../prompt/ContextAssembly.js"
import type * as SessionPrompt from "../prompt/SessionPrompt.js"
import type { Journal } from "../record/Journal.js"
import type { ToolRegistry } from "../tool/ToolRegistry.js"
import type { ToolRuntime } from "../tool/ToolRuntime.js"
import type { Pipeline } from "../turn/Pipeline.js"
import * as Cost from "./Cost.js"
import * as MessageIds from "./MessageIds.js"
import * as Pricing from "./Pricing.js"
import type * as SdkMessage from "./SdkMessage.js"
import * as SdkProjection from "./SdkProjection.js"
import type { Options } from "./SessionOptions.js"
import * as SessionState from "./SessionState.js"
import type { SessionStore } from "./SessionStore.js"
import type * as Transcript from "./Transcript.js"
import * as TranscriptRecorder from "./TranscriptRecorder.js"
import * as TurnEnvelope from "./TurnEnvelope.js"

/** The services a session needs. @category Models */
export type Requirements =
  | ModelClient
  | ToolRuntime
  | ToolRegistry
  | Pipeline
  | Compactor
  | Permissions
  | ContextAssembly
  | SessionStore
  | Commands
  | Ids
  | Hooks

/** The services a turn of the session runs with (its state is provided per turn). @category Models */
export type TurnServices = ModelClient | ToolRuntime | ToolRegistry | Pipeline | Compactor | Permissions | Ids | Hooks

/** The session as it is now. `/clear` replaces it with a new one. @category Models */
export interface Current {
  readonly id: string
  readonly state: SessionState.Service
  readonly recorder: TranscriptRecorder.Recorder
  readonly init: SdkMessage.SystemInit
  /** Whether `system`/`init` has gone out. */
  readonly opened: boolean
  /** Warnings for people from loading (a truncated last line), not shown yet. */
  readonly notices: ReadonlyArray<string>
  /**
   * The session's system prompt, resolved at its first use (the first turn) and the same all
   * session, with where its context came from (assembled, or kept from a resumed transcript).
   */
  readonly prompt: Effect.Effect<TurnEnvelope.Prepared>
  /** The last turn's envelope (a resumed transcript's last, until this session's first turn). */
  readonly envelope: Ref.Ref<TurnEnvelope.TurnEnvelope | undefined>
  /** The uuid of each of its messages: its SDK message's and its transcript entry's. */
  readonly messageIds: MessageIds.MessageIds
}

/** What the parts of a session share. @category Models */
export interface Engine {
  readonly options: Options
  readonly current: Ref.Ref<Current>
  readonly services: Context.Context<TurnServices>
  readonly ids: Ids["Type"]
  readonly registry: ToolRegistry["Type"]
  readonly permissions: Permissions["Type"]
  readonly compactor: Compactor["Type"]
  readonly commands: Commands["Type"]
  readonly store: SessionStore["Type"]
  readonly pricing: Pricing.Table
  /** The `max_tokens` of a request to a model: its default, or the session's `maxTokens` up to its limit. */
  readonly maxTokens: (model: string) => number
  readonly maxTurns: number
  /** The model of later turns (`/model` switches it); a state's `model` is the model of its current call. */
  readonly model: Ref.Ref<string>
  /** The thinking setting of later turns (`setThinking` changes it). */
  readonly thinking: Ref.Ref<Thinking.Setting>
  /** When the session started (`Clock` ms). */
  readonly startedAt: number
  /** One turn (or command) at a time. */
  readonly turnLock: Effect.Semaphore
  /** Completed to stop the running turn (a fresh one per turn). */
  readonly interrupt: Ref.Ref<Deferred.Deferred<void>>
  /** The current session's system prompt (see `Current.prompt`). */
  readonly prompt: Effect.Effect<SessionPrompt.Resolved>
  /** What assembles a new session's prompt. */
  readonly assembly: ContextAssembly["Type"]
  readonly mentionReader: Mentions.Reader
  /** Models without a price already warned about, as `session id␀model`. */
  readonly warnedUnpriced: Ref.Ref<ReadonlySet<string>>
  /** Whether transcripts are written. */
  readonly persist: boolean
  /** The journal the session's turns are recorded in (`keel --record`, the testing layer), if any. */
  readonly journal: Journal["Type"] | undefined
}

/** The stamp of the current session's own messages. @category Constructors */
export const stampOf = (engine: Engine, current: Current): SdkProjection.Stamp => ({
  sessionId: current.id,
  uuid: engine.ids.uuid,
  messageUuid: current.messageIds.of,
  parentToolUseId: null
})

/** The current session's transcript file, when transcripts are written. @category Accessors */
export const transcriptPathOf = (engine: Pick<Engine, "store" | "persist" | "options">, current: Current): string | undefined =>
  engine.persist ? engine.store.fileOf(engine.options.cwd, current.id) : undefined

/**
 * A recorder for session `id` (continuing `continues`, or a new file saying where it came from),
 * its messages' entries carrying their `messageIds` uuids.
 *
 * @category Constructors
 */
export const recorderFor = (
  engine: Pick<Engine, "store" | "persist" | "options" | "model" | "ids">,
  state: SessionState.Service,
  id: string,
  continues: Transcript.Loaded | undefined,
  origin: TranscriptRecorder.Options["origin"],
  messageIds: MessageIds.MessageIds
): Effect.Effect<TranscriptRecorder.Recorder> =>
  engine.persist
    ? TranscriptRecorder.make({
      store: engine.store,
      cwd: engine.options.cwd,
      sessionId: id,
      state,
      primaryModel: Ref.get(engine.model),
      continues,
      origin,
      uuid: engine.ids.uuid,
      messageUuid: messageIds.of
    })
    : Effect.succeed(TranscriptRecorder.disabled)

/**
 * A session's prompt, resolved at its first use and then kept: over the recorded one of a resumed
 * transcript (`recorded`), else assembled now (`source`: for a new session, or a refresh).
 *
 * @category Constructors
 */
export const promptFor = (
  engine: Pick<Engine, "options" | "assembly">,
  recorded?: TurnEnvelope.Recorded | undefined,
  source: "assembled" | "refreshed" = "assembled"
): Effect.Effect<Effect.Effect<TurnEnvelope.Prepared>> =>
  Effect.cached(TurnEnvelope.prepare(engine.options, engine.assembly, recorded, source))

/**
 * `/clear`: a new session in this one, with a new id, fresh state and a new transcript whose first
 * entry says it follows `previous`. Its `system`/`init` counts as sent (the caller sends it).
 *
 * @category Constructors
 */
export const cleared = (engine: Engine, previous: Current): Effect.Effect<Current> =>
  Effect.gen(function*() {
    const id = engine.ids.uuid()
    const state = yield* SessionState.make(id)
    const messageIds = MessageIds.make(engine.ids.uuid)
    const recorder = yield* recorderFor(engine, state, id, undefined, { source: "clear", from: previous.id }, messageIds)
    return {
      id,
      state,
      recorder,
      init: { ...previous.init, session_id: id, uuid: engine.ids.uuid() },
      opened: true,
      notices: [],
      // A new session: its context is assembled afresh (git, instruction files, the date as they are now).
      prompt: yield* promptFor(engine),
      envelope: yield* Ref.make<TurnEnvelope.TurnEnvelope | undefined>(undefined),
      messageIds
    }
  })

/**
 * The messages that open the session's output, once: `system`/`init` (first time only) and the
 * warnings from loading its transcript.
 *
 * @category Steps
 */
export const opening = (engine: Engine): Effect.Effect<{ readonly current: Current; readonly messages: Array<SdkMessage.SdkMessage> }> =>
  Ref.modify(engine.current, (current) => {
    const messages: Array<SdkMessage.SdkMessage> = current.opened ? [] : [current.init]
    const stamp = stampOf(engine, current)
    for (const notice of current.notices) messages.push(SdkProjection.warning(notice, stamp))
    const next = current.opened && current.notices.length === 0 ? current : { ...current, opened: true, notices: [] }
    return [{ current: next, messages }, next]
  })

/** The session's cost so far: `modelUsage` and `total_cost_usd`. @category Steps */
export const costOf = (engine: Engine, current: Current) =>
  Effect.map(Ref.get(current.state.usage), (usage) => {
    const r = Cost.report(usage, {
      pricing: engine.pricing,
      maxOutputTokens: engine.maxTokens,
      contextWindow: (model) => windowFor(model, engine.options.models)
    })
    return { modelUsage: r.modelUsage, totalCostUsd: r.totalCostUsd }
  })

/** A `system`/`informational` warning for each model used without a price, once per model and session. @category Steps */
export const unpricedWarnings = (engine: Engine, current: Current): Effect.Effect<Array<SdkMessage.SdkMessage>> =>
  Effect.gen(function*() {
    const usage = yield* Ref.get(current.state.usage)
    const key = (model: string) => `${current.id}\u0000${model}`
    const fresh = yield* Ref.modify(engine.warnedUnpriced, (warned) => {
      const models = [...usage.keys()].filter((m) => !warned.has(key(m)) && Pricing.priceOf(m, engine.pricing) === undefined)
      return [models, models.length === 0 ? warned : new Set([...warned, ...models.map(key)])]
    })
    const stamp = stampOf(engine, current)
    return fresh.map((model) => SdkProjection.warning(Cost.unpricedWarning(model), stamp))
  })

/** What a command of the current session reads and changes. @category Steps */
export const commandContext = (engine: Engine, current: Current): CommandContext => ({
  state: current.state,
  model: engine.model,
  defaultModel: engine.options.model,
  pricing: engine.pricing,
  maxOutputTokens: engine.maxTokens,
  system: Effect.map(current.prompt, (p) => p.resolved.request.system),
  tools: engine.registry.definitions,
  startedAt: engine.startedAt,
  commands: engine.commands.commands,
  envelope: Ref.get(current.envelope),
  nextContext: Effect.flatMap(Ref.get(engine.current), (c) =>
    Effect.map(c.prompt, (p) => ({ hash: p.record.hash, context: p.context }))),
  refreshContext: refreshContext(engine, current)
})

/**
 * `/context refresh`: the current session's prompt assembled again now, for its later turns (the
 * cached prefix after the tools is written again once).
 *
 * @category Steps
 */
export const refreshContext = (engine: Engine, current: Current): Effect.Effect<void> =>
  Effect.gen(function*() {
    const prompt = yield* promptFor(engine, undefined, "refreshed")
    yield* prompt
    yield* Ref.update(engine.current, (c) => (c.id === current.id ? { ...c, prompt } : c))
  })

/** Warnings from the transcript (a failed write) as messages of the current session. @category Steps */
export const warnings = (engine: Engine, current: Current, texts: ReadonlyArray<string>): Array<SdkMessage.SdkMessage> => {
  const stamp = stampOf(engine, current)
  return texts.map((text) => SdkProjection.warning(text, stamp))
}
