/**
 * `Glob` (`pattern`, `path`): files matching a glob pattern, newest first, `.gitignore` respected,
 * at most 100 (then a note says more were found).
 *
 * @since 0.1.0
 */
import { PermissionRule, type Permissions, ReadRules, Tool } from "@keel/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import * as Texts from "./text/Texts.generated.js"
import * as Workspace from "./Workspace.js"

/** Most paths one Glob returns. @category Constants */
export const MAX_RESULTS = 100

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The glob pattern to match files against, e.g. \"**/*.ts\"" }),
  path: Schema.optional(Schema.String).annotations({
    description: "The directory to search in (default: the working directory)"
  })
})

/**
 * The structured result of a search, in Claude Code's shape (`GlobOutput`): the paths returned,
 * how many, whether more matched, and how long it took.
 *
 * @category Models
 */
export interface Result {
  readonly durationMs: number
  readonly numFiles: number
  readonly filenames: ReadonlyArray<string>
  readonly truncated: boolean
}

/** The Glob tool. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type, Permissions.Permissions> = Tool.make({
  name: "Glob",
  description: Texts.Glob({ MAX_RESULTS }),
  input: Input,
  isReadOnly: true,
  call: (input, context) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const root = path.resolve(context.cwd, input.path ?? ".")
      const scope = yield* ReadRules.forCall(context.cwd)
      // The folder the call was allowed to search: its path and the pattern's fixed prefix. Files
      // whose real path leaves it and the workspace (`**/../..`, symlinked folders) or that a Read
      // deny rule covers are skipped silently.
      const base = PermissionRule.targetPath("Glob", input, context.cwd) ?? root
      const found = (yield* Workspace.find(root, input.pattern)).filter((f) => scope.visible(f.path, base))
      const filenames = found.slice(0, MAX_RESULTS).map((f) => f.path)
      const result: Result = {
        durationMs: (yield* Clock.currentTimeMillis) - started,
        numFiles: filenames.length,
        filenames,
        truncated: found.length > MAX_RESULTS
      }
      const shown = filenames.join("\n")
      return Tool.structured(
        found.length === 0
          ? "No files found"
          : result.truncated
          ? `${shown}\n(Results are truncated: ${found.length} files matched. Use a more specific path or pattern.)`
          : shown,
        result
      )
    })
})
