/**
 * The testing toolkit: everything a session needs, scripted and deterministic, in one layer, and
 * the helpers that drive virtual time. Under {@link layer} the same script gives the same output,
 * byte for byte: the model is `TestModel` (its ids depend only on the script), ids come from a
 * seeded generator, random draws (retry jitter) are fixed, and time is `TestClock`'s (provided by
 * `@effect/vitest`'s `it.effect`, or `TestContext.TestContext`).
 *
 * ```ts
 * import { it } from "@effect/vitest"
 * import { Testing, TestModel } from "@keel/core/testing"
 *
 * it.effect("a 529 is retried after the backoff", () =>
 *   Effect.gen(function*() {
 *     const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
 *     const messages = yield* Testing.runFor(Duration.seconds(10), Stream.runCollect(session.submit("hi")))
 *     const times = yield* Testing.requestTimes
 *     // times: [0, 563] (500 ms backoff + 12.5 % jitter at the fixed 0.5)
 *   }).pipe(Effect.scoped, Effect.provide(Testing.layer([TestModel.fail(overloaded), TestModel.text("hello")]))))
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as TestClock from "effect/TestClock"
import type { TestServices } from "effect/TestServices"
import * as Compactor from "../context/Compactor.js"
import * as BuiltinCommands from "../input/BuiltinCommands.js"
import type * as Commands from "../input/Commands.js"
import * as Hooks from "../hook/Hooks.js"
import * as Ids from "../ids/Ids.js"
import type * as Credentials from "../model/Credentials.js"
import type * as ModelClient from "../model/ModelClient.js"
import * as TestModel from "../model/TestModel.js"
import * as Permissions from "../permission/Permissions.js"
import * as ContextAssembly from "../prompt/ContextAssembly.js"
import type { Requirements } from "../session/Engine.js"
import * as Journal from "../record/Journal.js"
import type * as JournalEntry from "../record/JournalEntry.js"
import * as RecordingModel from "../record/RecordingModel.js"
import * as RecordingTools from "../record/RecordingTools.js"
import * as ReplayModel from "../record/ReplayModel.js"
import * as ReplayTools from "../record/ReplayTools.js"
import * as Resilience from "../resilience/Resilience.js"
import * as SessionStore from "../session/SessionStore.js"
import type * as Tool from "../tool/Tool.js"
import * as ToolRegistry from "../tool/ToolRegistry.js"
import * as ToolRuntime from "../tool/ToolRuntime.js"
import * as Pipeline from "../turn/Pipeline.js"
import * as Actions from "../action/Actions.js"

/** The seed of the testing layer's ids. @category Constants */
export const SEED = 1

/** The testing layer's random draws: always 0.5 (retry jitter is then exactly 12.5 % of the backoff). @category Constants */
export const RANDOM = 0.5

/**
 * Effect's `Random` fixed to `values`, drawn in turn (default {@link RANDOM}): backoff jitter, and
 * anything else that draws, repeat run to run.
 *
 * @category Layers
 */
export const fixedRandom = (...values: ReadonlyArray<number>): Layer.Layer<never> =>
  Layer.setRandom(Random.fixed(values.length === 0 ? [RANDOM] : [values[0]!, ...values.slice(1)]))

/** What {@link layer} can be given instead of its defaults. @category Models */
export interface Options {
  /** The tools (default none). */
  readonly tools?: ReadonlyArray<Tool.Any> | undefined
  /**
   * The permission policy (default `Permissions.layerAllowAll`: every call runs); it may ask through
   * the layer's `Actions` (`Permissions.layerAsking`).
   */
  readonly permissions?: Layer.Layer<Permissions.Permissions, never, Actions.Actions> | undefined
  /**
   * The context pipeline and compactor, over the scripted model (default none: no stages, no
   * compaction). E.g. `ContextManagement.layer({ directory }).pipe(Layer.provide(NodeContext.layer))`.
   */
  readonly context?: Layer.Layer<Pipeline.Pipeline | Compactor.Compactor, never, ModelClient.ModelClient> | undefined
  /** Where transcripts go (default `SessionStore.layerMemory()`). */
  readonly store?: Layer.Layer<SessionStore.SessionStore> | undefined
  /** The commands (default the built-in ones). */
  readonly commands?: Layer.Layer<Commands.Commands> | undefined
  /**
   * The resilience stack over the scripted model (idle watchdog, retries, fallback: see
   * `Resilience.layer`); default none, a failure of the script is the call's failure.
   */
  readonly resilience?: Resilience.Options | undefined
  /** The hooks (default none: `Hooks.layerNone`). */
  readonly hooks?: Layer.Layer<Hooks.Hooks> | undefined
  /** The seed of the ids (default {@link SEED}); two layers with one seed give the same ids. */
  readonly seed?: number | undefined
}

/**
 * Everything a session needs, scripted: `TestModel` with `script` (and its `TestModel` service to
 * read the requests), the tools under the permission policy, no context stages, the minimal system
 * prompt, transcripts in memory, the built-in commands, seeded ids and a fixed `Random`.
 *
 * @category Layers
 */
export const layer = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  options: Options = {}
): Layer.Layer<Requirements | TestModel.TestModel | Actions.Actions | Journal.Journal> =>
  services(TestModel.layer(script), options)

/**
 * The session layer of {@link layer}, its model a replay of `entries` (a journal, see
 * `ReplayModel`) instead of a script: the same session run again must ask for exactly what was
 * recorded, and `ReplayModel.Replay` says where it did not. The replay is journaled too, so a
 * test can compare the two journals.
 *
 * @category Layers
 */
export const layerReplay = (
  entries: ReadonlyArray<JournalEntry.Entry>,
  options: Options & {
    /** Tool calls served from the journal (`recorded`, the default) or run again (`live`). */
    readonly replayTools?: "recorded" | "live" | undefined
  } = {}
): Layer.Layer<Requirements | ReplayModel.Replay | Actions.Actions | Journal.Journal> =>
  services(ReplayModel.layer(entries), options, options.replayTools === "live" ? undefined : ReplayTools.layer(entries))

/** The session's services over `base`, the model at the bottom of the stack (journaled). */
const services = <Base>(
  base: Layer.Layer<ModelClient.ModelClient | Credentials.Credentials | Base>,
  options: Options,
  toolsFrom?: Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry>
): Layer.Layer<Requirements | Base | Actions.Actions | Journal.Journal> => {
  // The journal records what the base model streamed, below the resilience layers, and every tool
  // call (one journal per layer use).
  const journal = Journal.layerMemory
  const recorded = RecordingModel.layer().pipe(Layer.provideMerge(base), Layer.provideMerge(journal))
  const registry = ToolRegistry.layer(options.tools ?? [])
  const tools = RecordingTools.layer.pipe(
    Layer.provide(toolsFrom === undefined ? registry : toolsFrom.pipe(Layer.provide(registry))),
    Layer.provide(journal)
  )
  // One model for the session and for the context stages that call it (a layer is built once per use).
  const model = options.resilience === undefined
    ? recorded
    : Resilience.layer(options.resilience).pipe(Layer.provideMerge(recorded))
  const ids = Ids.layerSeeded(options.seed ?? SEED)
  // One actions service for the permission asks and the runtime that answers them (memoized).
  const actions = Actions.layer().pipe(Layer.provide(ids))
  return Layer.mergeAll(
    model,
    (options.context ?? Layer.merge(Pipeline.layerEmpty, Compactor.layerNone)).pipe(Layer.provide(model)),
    ToolRuntime.layer().pipe(
      Layer.provideMerge(tools),
      Layer.provideMerge((options.permissions ?? Permissions.layerAllowAll).pipe(Layer.provide(actions)))
    ),
    actions,
    ContextAssembly.layerMinimal,
    options.store ?? SessionStore.layerMemory(),
    options.commands ?? BuiltinCommands.layer,
    ids,
    options.hooks ?? Hooks.layerNone,
    fixedRandom()
  )
}

/**
 * Runs `effect` in a fiber, lets virtual time pass by `duration` (`TestClock.adjust`), then waits
 * for it: what a test of a timeout, a backoff or a watchdog does.
 *
 * @category Time
 */
export const runFor = <A, E, R>(
  duration: Duration.DurationInput,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | TestServices> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* TestClock.adjust(duration)
    return yield* Fiber.join(fiber)
  })

/** When each model request arrived, in virtual milliseconds (the scripted model's record). @category Time */
export const requestTimes: Effect.Effect<ReadonlyArray<number>, never, TestModel.TestModel> = Effect.flatMap(
  TestModel.TestModel,
  (model) => model.requestTimes
)

/** What the layer's journal holds so far: every model call the session made, as recorded. @category Recording */
export const journal: Effect.Effect<ReadonlyArray<JournalEntry.Entry>, never, Journal.Journal> = Effect.map(
  Journal.Journal,
  (j) => j.entries()
)
