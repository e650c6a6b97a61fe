/**
 * How a run journals: recording (`--record`, `KEEL_RECORD=1`: see `Journal`), replaying a journal
 * (`keel replay`), or neither. It decides the parts of the run that depend on it:
 *
 * - ids and random draws: from a seed the journal's header keeps (a recording draws a new one, a
 *   replay takes the recorded one), else the platform's;
 * - the journal: beside the transcript with the run's command line, folder and configuring
 *   variables when recording, or when resuming a session that was recorded; none otherwise;
 * - the model: the Anthropic API (journaled below the resilience layers when recording), or the
 *   journal's calls served back under the same layers when replaying;
 * - the tools: journaled when recording; served from the journal (or run and counted, `live`)
 *   when replaying;
 * - the store: a replay's transcript stays in memory.
 *
 * @since 0.1.0
 */
import {
  DurableTurn,
  Ids,
  Journal,
  JournalEntry,
  type ModelClient,
  RecordingTools,
  ReplayTools,
  SessionStore,
  type ToolRegistry,
  ToolsInFlight
} from "@keel/core"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type { ConfigError } from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as Random from "effect/Random"
import type * as ApiKeyHelper from "./settings/ApiKeyHelper.js"
import type { Options } from "./RunOptions.js"
import * as RunModel from "./RunModel.js"

/** The parts of a run that depend on how it journals. @category Models */
export interface Journaling {
  readonly ids: Layer.Layer<Ids.Ids>
  readonly journal: Layer.Layer<Journal.Journal>
  /** The random draws' seed, as a layer (none: the default `Random`). */
  readonly random: Layer.Layer<never>
  readonly store: Layer.Layer<SessionStore.SessionStore, ConfigError, FileSystem.FileSystem | Path.Path>
  /** The run's model. */
  readonly model: (
    apiKeyHelper: ApiKeyHelper.Helper | undefined
  ) => Layer.Layer<ModelClient.ModelClient, RunModel.ModelLayerError>
  /** The tools offered, journaled or served as the run needs. */
  readonly tools: <E, R>(offered: Layer.Layer<ToolRegistry.ToolRegistry, E, R>) => Layer.Layer<ToolRegistry.ToolRegistry, E, R>
}

/** How the run of `options` journals. @category Constructors */
export const of = (options: Options): Journaling => {
  const replay = options.replay
  const seed = replay !== undefined
    ? replay.seed
    : options.record === true
    ? globalThis.crypto.getRandomValues(new Uint32Array(1))[0]!
    : undefined
  const recording = seed !== undefined && replay === undefined
  // A resumed session that was recorded stays recorded without --record (Journal.layerContinuing).
  const continuing = !recording && replay === undefined && options.sessionPersistence !== false &&
    (options.resume !== undefined || options.continue === true)
  const run = { argv: options.argv ?? process.argv.slice(2), cwd: options.cwd, env: Journal.configuringEnv(options.env ?? process.env) }
  const journal = recording ? Journal.layerBeside(seed, run) : continuing ? Journal.layerContinuing(run) : Journal.layerNone
  return {
    ids: seed === undefined ? Ids.layer : Ids.layerSeeded(seed),
    journal,
    random: seed === undefined ? Layer.empty : Layer.setRandom(Random.make(seed)),
    store: replay !== undefined ? SessionStore.layerMemory() : SessionStore.layerConfig,
    model: (apiKeyHelper) =>
      replay !== undefined
        ? RunModel.replayLayer(options.fallbackModels, replay.entries)
        : RunModel.modelLayer(options.fallbackModels, apiKeyHelper, { record: recording || continuing }).pipe(Layer.provide(journal)),
    tools: (offered) =>
      replay !== undefined
        ? (replay.tools === "recorded"
          ? ReplayTools.layer(replay.entries)
          : ToolsInFlight.layer(replay.running ?? ToolsInFlight.counter())).pipe(Layer.provide(offered))
        : recording || continuing
        ? RecordingTools.layer.pipe(Layer.provide(offered), Layer.provide(journal))
        : offered
  }
}

/**
 * What a resumed session's journal recorded (see `DurableTurn`), when it was recorded: the results
 * of tool calls a crash cut off from its transcript, and whether its last turn was left open. A
 * journal that cannot be read gives nothing, with a warning saying why.
 *
 * @category Resuming
 */
export const recovered = (
  transcriptFile: string
): { readonly recovered?: DurableTurn.Recovered | undefined; readonly warning?: string | undefined } => {
  const file = Journal.fileOf(transcriptFile)
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    return {}
  }
  const parsed = JournalEntry.parse(text)
  return Either.isRight(parsed)
    ? { recovered: DurableTurn.recover(parsed.right) }
    : {
      warning: `the session's journal ${file} cannot be read (line ${parsed.left.line}: ${parsed.left.message}); ` +
        "tool calls a crash cut off are answered as interrupted, and a turn it left open does not run on"
    }
}
