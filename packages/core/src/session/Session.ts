/**
 * The session: one engine per conversation. `submit` is its single entry: a prompt runs a model
 * turn (`TurnRunner`), a slash command runs through the `Commands` service (`CommandRunner`), and
 * either way the output is SDK-shaped messages (`system`/`init` first, exactly one `result` per
 * prompt). The session's identity, state and transcript are the current session (`Engine.Current`),
 * held in one `Ref`: `/clear` replaces it whole.
 *
 * Every service the session uses is in its requirements (`Engine.Requirements`): the permission
 * policy, the compactor, the transcript store, the prompt assembly, the commands and the id
 * generator are chosen by the layers provided (`Permissions.layerAllowAll`, `Compactor.layerNone`,
 * `SessionStore.layerNoop`, `ContextAssembly.layerMinimal` when one is not wanted), never found
 * missing at run time. The session lives in a scope: it is a `keel.session` span, ended with it.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { Compactor } from "../context/Compactor.js"
import { Commands } from "../input/Commands.js"
import * as Mentions from "../input/Mentions.js"
import * as SlashCommand from "../input/SlashCommand.js"
import { Hooks } from "../hook/Hooks.js"
import * as SessionHooks from "../hook/SessionHooks.js"
import { Ids } from "../ids/Ids.js"
import { NestedMemory } from "../memory/NestedMemory.js"
import type { UserMessage } from "../message/Message.js"
import * as ModelCapabilities from "../model/ModelCapabilities.js"
import { ModelClient } from "../model/ModelClient.js"
import * as Thinking from "../model/Thinking.js"
import * as StructuredOutputTool from "../output/StructuredOutputTool.js"
import { Permissions } from "../permission/Permissions.js"
import { ContextAssembly } from "../prompt/ContextAssembly.js"
import * as DurableTurn from "../record/DurableTurn.js"
import { carryOver, Journal } from "../record/Journal.js"
import * as RecordedResults from "../record/RecordedResults.js"
import * as TurnMarks from "../record/TurnMarks.js"
import type * as SystemPrompt from "../prompt/SystemPrompt.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import { ToolRuntime } from "../tool/ToolRuntime.js"
import { Pipeline } from "../turn/Pipeline.js"
import * as CommandRunner from "./CommandRunner.js"
import { type Current, type Engine, promptFor, recorderFor, type Requirements, type TurnServices } from "./Engine.js"
import * as MessageIds from "./MessageIds.js"
import * as Pricing from "./Pricing.js"
import * as Resume from "./Resume.js"
import type * as SdkMessage from "./SdkMessage.js"
import {
  DEFAULT_MAX_TURNS,
  type NewSession,
  type Options,
  type SubmitOptions,
  VERSION
} from "./SessionOptions.js"
import * as SessionState from "./SessionState.js"
import { SessionStore } from "./SessionStore.js"
import * as Transcript from "./Transcript.js"
import type { LoadError, SessionLocked, TranscriptIoError } from "./TranscriptError.js"
import * as TurnEnvelope from "./TurnEnvelope.js"
import * as TurnRunner from "./TurnRunner.js"

export {
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  INTERRUPTED_NOTE,
  type NewSession,
  type Options,
  type SubmitOptions,
  VERSION
} from "./SessionOptions.js"
export type { Requirements } from "./Engine.js"

/** @category Models */
export interface Service {
  /** The current session's id; `/clear` starts a new session, with a new id. */
  readonly sessionId: Effect.Effect<string>
  /** The current session's state (`/clear` starts a new one). */
  readonly state: Effect.Effect<SessionState.Service>
  /** The current session's `system`/`init` message (emitted before its first messages). */
  readonly init: Effect.Effect<SdkMessage.SystemInit>
  /**
   * Runs one prompt and streams its messages; the last is its `result`. Turns run one at a time: a
   * second `submit` waits for the first to finish. A prompt that starts with `/name` is a command
   * (see `Commands`): `/compact`, `/clear`, `/cost`, `/context`, `/model`, `/help`, the embedder's and
   * the Markdown ones; an unknown command is an error result, and nothing goes to the model. In a
   * prompt, `@path` attaches the file (see `Mentions`). A `UserMessage` is sent as it is: no
   * commands, no mentions.
   */
  readonly submit: (prompt: string | UserMessage, options?: SubmitOptions) => Stream.Stream<SdkMessage.SdkMessage>
  /** The model later turns use: `options.model`, until `/model` or `setModel` switches it. */
  readonly model: Effect.Effect<string>
  /** Switches later turns to `model` (as `/model` does). */
  readonly setModel: (model: string) => Effect.Effect<void>
  /** The thinking setting later turns use: `options.thinking` until `setThinking` changes it. */
  readonly thinking: Effect.Effect<Thinking.Setting>
  /** Changes later turns' thinking and effort (a host's `set_max_thinking_tokens`). */
  readonly setThinking: (setting: Thinking.Setting) => Effect.Effect<void>
  /** Stops the running turn (model stream and tools); it ends with an `error_during_execution` result. */
  readonly interrupt: Effect.Effect<void>
  /** The session's system prompt: built at the first use (the first turn), then the same all session. */
  readonly systemPrompt: Effect.Effect<SystemPrompt.SystemPrompt>
  /**
   * Writes what changed in the current session's state to its transcript now, and flushes it (the
   * runtime's facts: queue, goal, actions, which change between turns too). Answers warnings for
   * people (empty when all went well).
   */
  readonly save: Effect.Effect<ReadonlyArray<string>>
  /**
   * Runs on the turn a restart cut while one of its tool calls waited for an answer: the last
   * answer's tool calls run (their permission asks take up the restored pending actions), then the
   * turn goes on. The runtime's `resume` decides when (see `PendingTools`).
   */
  readonly resumeTools: (options?: SubmitOptions) => Stream.Stream<SdkMessage.SdkMessage>
}

/** @category Context */
export class Session extends Context.Tag("@keel/core/Session")<Session, Service>() {}

/** The current session at the start: a new one, a resumed one (same id and file), or a fork. */
const firstSession = (
  engine: Omit<Engine, "current" | "prompt">,
  loaded: Transcript.Loaded | undefined,
  locked: string | undefined
): Effect.Effect<Current, LoadError, Scope.Scope> =>
  Effect.gen(function*() {
    const { options } = engine
    const fork = loaded !== undefined && Resume.isFork(options)
    const id = loaded !== undefined && !fork ? loaded.sessionId : options.sessionId ?? engine.ids.uuid()
    // One writer per session: the session this one writes is locked for its life (unless already).
    // A new file's lock that cannot be made is not fatal: nothing else can be writing a file that
    // is not there yet, and the recorder says the transcript cannot be written (a warning).
    if (engine.persist && locked !== id) {
      const lock = engine.store.lock(options.cwd, id)
      yield* loaded !== undefined && !fork ? lock : Effect.catchTag(lock, "TranscriptIoError", () => Effect.void)
    }
    // A crash's cut tool calls keep what the journal recorded (else they are answered "interrupted").
    const recovered = loaded !== undefined ? options.recovered : undefined
    const recordedAnswer = recovered === undefined ? undefined : (id: string) => RecordedResults.answerOf(recovered.calls(id), id)
    const history = loaded !== undefined ? Transcript.answerDangling(loaded.messages, recordedAnswer) : options.history ?? []
    const state = yield* SessionState.make(id, history)
    if (loaded !== undefined) yield* Resume.restore(state, loaded)
    // The turn the crash left open runs on when the runtime resumes (a fork starts its own turns).
    if (loaded !== undefined && recovered?.openTurn === true && !fork) yield* Ref.set(state.openTurn, DurableTurn.continuation(loaded.messages))
    const messageIds = MessageIds.make(engine.ids.uuid, loaded?.uuids)
    const recorder = yield* recorderFor(
      engine,
      state,
      id,
      fork ? undefined : loaded,
      fork ? { source: "fork", from: loaded.sessionId } : undefined,
      messageIds
    )
    // A fork cut at a message carries the source's journal over, before this process's lines.
    const file = recorder.file
    const carried = fork && options.resumeSessionAt !== undefined && file !== undefined
      ? yield* Effect.sync(() => carryOver(loaded.file, file))
      : undefined
    // A journal kept beside the transcript starts writing now that the session has a file.
    if (recorder.file !== undefined) engine.journal?.attach(recorder.file)
    const init: SdkMessage.SystemInit = {
      type: "system",
      subtype: "init",
      cwd: options.cwd,
      session_id: id,
      tools: engine.registry.tools.map((t) => t.name),
      mcp_servers: options.mcpServers ?? [],
      model: options.model,
      // The mode in force: the permission policy's own, whatever the caller believes.
      permissionMode: engine.permissions.config.mode,
      slash_commands: engine.commands.commands.map((c) => c.name),
      apiKeySource: "ANTHROPIC_API_KEY",
      claude_code_version: VERSION,
      output_style: "default",
      skills: [],
      plugins: [],
      ...(options.agents !== undefined ? { agents: options.agents } : {}),
      uuid: engine.ids.uuid()
    }
    return {
      id,
      state,
      recorder,
      init,
      opened: false,
      notices: [...(loaded?.warnings ?? []), ...(carried !== undefined ? [carried] : [])],
      // A resumed session (or a fork) sends the prompt and context its transcript's last turn sent.
      prompt: yield* promptFor(engine, (loaded !== undefined ? TurnEnvelope.recordedOf(loaded) : undefined) ?? options.recordedPrompt),
      envelope: yield* Ref.make(loaded?.envelopes.at(-1)),
      messageIds
    }
  })

/**
 * A session over the services in context. Its transcript is written to the `SessionStore` as it
 * goes (unless `persist: false`); with `resume` or `continue` it starts from a saved one, and fails
 * with a `LoadError` when that cannot be used (never touching the file). The session it writes is
 * locked for the life of its scope (`SessionStore.lock`): a session another writer holds fails with
 * `SessionLocked`.
 *
 * @category Constructors
 */
export function make(
  options: Options & NewSession
): Effect.Effect<Service, SessionLocked | TranscriptIoError, Requirements | Scope.Scope>
export function make(options: Options): Effect.Effect<Service, LoadError, Requirements | Scope.Scope>
export function make(options: Options): Effect.Effect<Service, LoadError, Requirements | Scope.Scope> {
  return Effect.gen(function*() {
    const store = yield* SessionStore
    const { loaded, locked } = yield* Resume.lockedTranscriptOf(options, store)
    const ids = yield* Ids
    const registry = yield* ToolRegistry
    if (options.structuredOutput !== undefined) {
      yield* StructuredOutputTool.registered(registry, options.structuredOutput.schema)
    }
    const permissions = yield* Permissions
    const span = yield* Effect.makeSpanScoped("keel.session", {
      captureStackTrace: false,
      attributes: { "keel.cwd": options.cwd, "keel.model": options.model }
    })
    const services = Context.pick(ModelClient, ToolRuntime, ToolRegistry, Pipeline, Compactor, Permissions, Ids, Hooks)(
      yield* Effect.context<TurnServices>()
    ).pipe(Context.add(Tracer.ParentSpan, span), Context.add(NestedMemory, yield* NestedMemory)) as Context.Context<TurnServices>
    const model = yield* Ref.make(options.model)
    const parts: Omit<Engine, "current" | "prompt"> = {
      options,
      services,
      ids,
      registry,
      permissions,
      compactor: yield* Compactor,
      commands: yield* Commands,
      store,
      pricing: options.pricing ?? Pricing.defaultTable,
      maxTokens: (model: string) => ModelCapabilities.maxTokensFor(model, options.maxTokens, options.models),
      maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
      model,
      thinking: yield* Ref.make(options.thinking ?? Thinking.modelDefault),
      startedAt: yield* Clock.currentTimeMillis,
      turnLock: yield* Effect.makeSemaphore(1),
      interrupt: yield* Ref.make(yield* Deferred.make<void>()),
      assembly: yield* ContextAssembly,
      mentionReader: Mentions.toolReader(options.mentionReader ?? registry.get("Read"), options.cwd, ids.uuid),
      warnedUnpriced: yield* Ref.make<ReadonlySet<string>>(new Set()),
      persist: options.persist !== false,
      journal: Option.getOrUndefined(yield* Effect.serviceOption(Journal))
    }
    const current = yield* Ref.make(yield* firstSession(parts, loaded, locked))
    // SessionEnd when the session closes (bounded by its hooks' timeouts).
    const hooks = Context.get(services, Hooks)
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(current), (c) => SessionHooks.sessionEnd(hooks, { sessionId: c.id, cwd: options.cwd }, "other"))
    )
    span.attribute("keel.session.id", (yield* Ref.get(current)).id)
    const engine: Engine = {
      ...parts,
      current,
      prompt: Effect.flatMap(Ref.get(current), (c) => Effect.map(c.prompt, (p) => p.resolved))
    }

    const submit = (prompt: string | UserMessage, submitOptions: SubmitOptions = {}) => {
      const command = typeof prompt === "string" ? SlashCommand.parse(prompt) : undefined
      return TurnMarks.around(
        engine.journal,
        prompt,
        command === undefined
          ? TurnRunner.run(engine, prompt, {
            signal: submitOptions.signal,
            turnId: submitOptions.turnId,
            metadata: submitOptions.metadata
          })
          : CommandRunner.run(engine, command, submitOptions)
      )
    }
    return Session.of({
      sessionId: Effect.map(Ref.get(current), (c) => c.id),
      state: Effect.map(Ref.get(current), (c) => c.state),
      init: Effect.map(Ref.get(current), (c) => c.init),
      submit,
      model: Ref.get(model),
      setModel: (next) => Ref.set(model, next),
      thinking: Ref.get(parts.thinking),
      setThinking: (next) => Ref.set(parts.thinking, next),
      interrupt: Effect.flatMap(Ref.get(engine.interrupt), (d) => Deferred.succeed(d, undefined)),
      systemPrompt: Effect.map(engine.prompt, (r) => r.prompt),
      save: Effect.flatMap(Ref.get(current), (c) => c.recorder.checkpoint({ sync: true })),
      resumeTools: (submitOptions = {}) =>
        TurnMarks.around(
          engine.journal,
          undefined,
          TurnRunner.run(engine, TurnRunner.RESUME_TOOLS, { signal: submitOptions.signal, turnId: submitOptions.turnId })
        )
    })
  })
}

/** A session layer (failing when `resume` or `continue` finds no usable transcript). @category Layers */
export const layer = (options: Options): Layer.Layer<Session, LoadError, Requirements> =>
  Layer.scoped(Session, make(options))
