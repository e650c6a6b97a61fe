/**
 * `Grep` (Claude Code's inputs: `pattern`, `path`, `glob`, `type`, `output_mode`, `-i`, `-n`, `-A`,
 * `-B`, `-C`, `multiline`, `head_limit`, `offset`): searches file contents with a regular
 * expression, over the files `Glob` would see (`.gitignore` respected). The output follows
 * ripgrep's: `path:line:text` for content (with `-` separators for context lines), paths for
 * `files_with_matches` (the default, newest first), `path:count` for `count`.
 *
 * `make` searches with ripgrep when `rg` (12 or later) is on the PATH, checked once per tool, and
 * with the built-in search otherwise: when rg is missing or fails to start, when
 * `KEEL_USE_BUILTIN_GREP=1`, or for a pattern ripgrep's regex engine does not take (look-around,
 * backreferences). The output is the same either way: both searches report `FileMatches` that
 * `GrepOutput` renders. `tool` is the built-in search alone.
 *
 * @since 0.1.0
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { type Permissions, ReadRules, Tool } from "@keel/core"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as BuiltinSearch from "./BuiltinSearch.js"
import * as GrepOutput from "./GrepOutput.js"
import * as GrepQuery from "./GrepQuery.js"
import * as Ripgrep from "./Ripgrep.js"
import * as Workspace from "./Workspace.js"
import * as Texts from "./text/Texts.generated.js"

/** Default number of output lines or paths (0 means all). @category Constants */
export const DEFAULT_HEAD_LIMIT = GrepOutput.DEFAULT_HEAD_LIMIT

/** File types as ripgrep names them (the common ones). @category Constants */
export const TYPES = GrepQuery.TYPES

/** The input, as the model sends it. @category Schemas */
export const Input = GrepQuery.Input

/** @category Schemas */
export type Input = GrepQuery.Input

/** The structured result of a search (Claude Code's `GrepOutput`). @category Models */
export type Result = GrepOutput.Result

/** The environment variable that, set to `1` or `true`, makes Grep use its built-in search even when ripgrep is installed. @category Constants */
export const USE_BUILTIN_ENV = "KEEL_USE_BUILTIN_GREP"

const useBuiltin: Effect.Effect<boolean> = Config.boolean(USE_BUILTIN_ENV).pipe(
  Config.withDefault(false),
  Effect.orElseSucceed(() => false)
)

const description = Texts.Grep({
  DEFAULT_HEAD_LIMIT,
  TYPES: Object.keys(TYPES).map((t) => `\`${t}\``).join(", ")
})

type Search = (query: GrepQuery.Query) => Effect.Effect<ReadonlyArray<GrepOutput.FileMatches>, Tool.ToolError>

const define = (search: Search): Tool.Tool<Input, Permissions.Permissions> =>
  Tool.make({
    name: "Grep",
    description,
    input: Input,
    isReadOnly: true,
    call: (input, context) =>
      Effect.gen(function*() {
        const made = yield* GrepQuery.make(input, context.cwd)
        // A path that is a pipe, socket or device is refused: searching it would wait for ever.
        yield* Workspace.checkRoot(made.root)
        // Files a Read deny rule covers, or outside the workspace, are skipped silently (as in Claude Code).
        const scope = yield* ReadRules.forCall(context.cwd)
        const query: GrepQuery.Query = {
          ...made,
          shows: (file) => scope.visible(file, made.root),
          excludeGlobs: scope.excludeGlobs(made.root)
        }
        const files = (yield* search(query)).filter((f) => scope.visible(f.path, made.root))
        return Tool.structured(GrepOutput.render(query, files), GrepOutput.result(query, files))
      })
  })

/** The Grep tool on the built-in search alone (no process is started). @category Constructors */
export const tool: Tool.Tool<Input, Permissions.Permissions> = define(BuiltinSearch.search)

/**
 * The Grep tool on ripgrep when it is installed, on the built-in search otherwise; `options` name
 * another rg executable or change the timeout. A ripgrep failure other than a missing rg or an
 * unsupported pattern (a timeout, an error it reports) is an error result.
 *
 * @category Constructors
 */
export const makeWith = (options: Ripgrep.Options = {}): Effect.Effect<Tool.Tool<Input, Permissions.Permissions>, never, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor
    // Detected on the first call and remembered (an interrupted detection is not remembered).
    const detected = yield* Ref.make(Option.none<boolean>())
    const installed = Effect.flatMap(Ref.get(detected), (known) =>
      Option.isSome(known) ? Effect.succeed(known.value) : Ripgrep.isAvailable(options.command).pipe(
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        Effect.tap((ok) => Ref.set(detected, Option.some(ok)))
      ))
    return define((query) =>
      Effect.gen(function*() {
        if ((yield* useBuiltin) || !(yield* installed)) return yield* BuiltinSearch.search(query)
        return yield* Ripgrep.search(query, options).pipe(
          Effect.provideService(CommandExecutor.CommandExecutor, executor),
          Effect.catchTag("RipgrepError", (e) =>
            e.reason === "Unavailable" || e.reason === "UnsupportedPattern" ? BuiltinSearch.search(query) : Tool.fail(e.message))
        )
      })
    )
  })

/** The Grep tool on ripgrep when it is installed (see {@link makeWith}). @category Constructors */
export const make: Effect.Effect<Tool.Tool<Input, Permissions.Permissions>, never, CommandExecutor.CommandExecutor> = makeWith()
