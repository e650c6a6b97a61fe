/**
 * `Glob` (`pattern`, `path`): files matching a glob pattern, newest first, `.gitignore` respected,
 * at most 100 (then a note says more were found).
 *
 * @since 0.1.0
 */
import { Tool } from "@keel/core"
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

/** The Glob tool. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type> = Tool.make({
  name: "Glob",
  description: Texts.Glob({ MAX_RESULTS }),
  input: Input,
  isReadOnly: true,
  call: (input, context) =>
    Effect.map(Workspace.find(path.resolve(context.cwd, input.path ?? "."), input.pattern), (found) => {
      if (found.length === 0) return "No files found"
      const shown = found.slice(0, MAX_RESULTS).map((f) => f.path).join("\n")
      return found.length > MAX_RESULTS
        ? `${shown}\n(Results are truncated: ${found.length} files matched. Use a more specific path or pattern.)`
        : shown
    })
})
