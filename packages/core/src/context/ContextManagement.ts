/**
 * The context management pipeline, least invasive first: tool result budget → snip → microcompact
 * → context collapse → autocompact (with reactive compaction through `Compactor`). Each stage is
 * also available on its own (`ToolResultBudget`, `Snip`, `Microcompact`, `ContextCollapse`,
 * `Autocompact`) for an embedder's own `Pipeline`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as os from "node:os"
import * as nodePath from "node:path"
import type { ModelClient } from "../model/ModelClient.js"
import * as Pipeline from "../turn/Pipeline.js"
import * as Autocompact from "./Autocompact.js"
import { Compactor, layerNone as compactorNone } from "./Compactor.js"
import * as ContextCollapse from "./ContextCollapse.js"
import * as Microcompact from "./Microcompact.js"
import * as Snip from "./Snip.js"
import * as TokenEstimate from "./TokenEstimate.js"
import * as ToolResultBudget from "./ToolResultBudget.js"

/** Options of the whole pipeline. @category Models */
export interface Options {
  /** The context window for every model (default: each model's, see `TokenEstimate.windowFor`). */
  readonly window?: number | undefined
  /** Where large tool results are saved: `<directory>/<sessionId>/tool-results/`. */
  readonly directory: string
  /** Microcompact from this fraction of the window (0.5). */
  readonly microcompactRatio?: number | undefined
  readonly autocompact?: Omit<Autocompact.Options, "window"> | undefined
}

/** The five stages and the compactor, over the model (for summaries) and the file system. @category Layers */
export const layer = (
  options: Options
): Layer.Layer<Pipeline.Pipeline | Compactor, never, ModelClient | FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const window = (model: string) => options.window ?? TokenEstimate.windowFor(model)
    const auto = yield* Autocompact.make({ ...options.autocompact, window: options.window })
    const stages = [
      yield* ToolResultBudget.make({ directory: options.directory }),
      yield* Snip.make(),
      yield* Microcompact.make({
        triggerTokens: (model) => Math.floor(window(model) * (options.microcompactRatio ?? 0.5)),
        // A compaction due now replaces the conversation: clearing results first would only cost
        // its summary request the cached prefix (and the summary the results).
        unless: auto.due
      }),
      ContextCollapse.make({ window }),
      auto.stage
    ]
    return Layer.merge(Pipeline.layer(stages), Layer.succeed(Compactor, auto.compactor))
  }))

/**
 * No context management: no stages, no compaction (a prompt too long ends the turn; `/compact` says
 * it is not available). The explicit choice for sessions too short to need it, and for tests.
 *
 * @category Layers
 */
export const layerNone: Layer.Layer<Pipeline.Pipeline | Compactor> = Layer.merge(Pipeline.layerEmpty, compactorNone)

/**
 * `KEEL_HOME` (default `~/.keel`): Keel's folder; sessions keep their files under `sessions/`.
 *
 * @category Configuration
 */
export const homeConfig: Config.Config<string> = Config.string("KEEL_HOME").pipe(
  Config.withDefault(nodePath.join(os.homedir(), ".keel"))
)

/** {@link layer} with the window from `KEEL_AUTO_COMPACT_WINDOW` and the folder from `KEEL_HOME`. @category Layers */
export const layerConfig: Layer.Layer<
  Pipeline.Pipeline | Compactor,
  ConfigError.ConfigError,
  ModelClient | FileSystem.FileSystem | Path.Path
> = Layer.unwrapEffect(
  Effect.map(
    Config.all({ window: TokenEstimate.windowConfig, home: homeConfig }),
    ({ home, window }) => layer({ window, directory: nodePath.join(home, "sessions") })
  )
)
