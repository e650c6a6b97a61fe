/**
 * Markdown agent files, as Claude Code reads them: every `.md` file under an agents folder
 * (subfolders included), its YAML frontmatter the agent's keys (`name` and `description` required;
 * see `AgentDefinition` for the rest) and its body the agent's prompt. The agent's name is the
 * frontmatter's `name`, not the file's.
 *
 * A file that cannot be used (unreadable, too large, frontmatter that is not YAML, a key missing or
 * refused) is skipped with a warning naming the file, what is wrong and how to fix it; the other
 * agents still load. The walk is bounded ({@link MAX_FILES}, {@link MAX_DEPTH},
 * {@link MAX_FILE_BYTES}) and reads no folder twice, so links cannot make it loop; a missing folder
 * has no agents.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { CommandFile } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Subagents from "../Subagents.js"
import * as AgentDefinition from "./AgentDefinition.js"

/** The most agent files read from one folder (the rest are left out, with a warning). @category Constants */
export const MAX_FILES = 200

/** How many folder levels below an agents folder are read. @category Constants */
export const MAX_DEPTH = 4

/** An agent file larger than this is skipped. @category Constants */
export const MAX_FILE_BYTES = 256 * 1024

/** The agents of one folder, and a line for each file skipped or key ignored. @category Models */
export interface Loaded {
  readonly definitions: ReadonlyArray<Subagents.Definition>
  readonly warnings: ReadonlyArray<string>
}

/**
 * The agent of a Markdown file's text, or what stops it (each problem a phrase about the file).
 *
 * @category Parsing
 */
export const parse = (text: string): Effect.Effect<Either.Either<AgentDefinition.Read, ReadonlyArray<string>>> =>
  CommandFile.parseMapping(text).pipe(
    Effect.map(({ body, data }) => {
      const name = data.name
      if (typeof name !== "string" || name.trim() === "") {
        return Either.left([
          "it has no name in its frontmatter (add name: and description: lines between --- lines at the top)"
        ])
      }
      return Either.mapLeft(
        AgentDefinition.read(name.trim(), { ...data, prompt: body }, { frontmatter: true }),
        (problems) => problems.map((p) => `agent ${name.trim()}: ${p}`)
      )
    }),
    Effect.catchTag("InvalidFile", (invalid) => Effect.succeed(Either.left([`it ${invalid.problem}. ${invalid.fix}`])))
  )

/** The `.md` files under `root`, sorted, within the bounds; and what was left out. */
const markdownFiles = (root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files: Array<string> = []
    const warnings: Array<string> = []
    const seen = new Set<string>()
    const walk = (dir: string, depth: number): Effect.Effect<void> =>
      Effect.gen(function*() {
        const real = yield* Effect.orElseSucceed(fs.realPath(dir), () => dir)
        if (seen.has(real)) return
        seen.add(real)
        const entries = yield* Effect.orElseSucceed(fs.readDirectory(dir), () => [] as Array<string>)
        for (const entry of [...entries].sort()) {
          const full = path.join(dir, entry)
          const info = yield* Effect.option(fs.stat(full))
          if (info._tag === "None") continue
          if (info.value.type === "Directory") {
            if (depth < MAX_DEPTH) yield* walk(full, depth + 1)
            continue
          }
          if (info.value.type !== "File" || !entry.endsWith(".md")) continue
          if (files.length >= MAX_FILES) {
            warnings.push(`more than ${MAX_FILES} agent files under ${root}: ${full} and the files after it were not read`)
            return
          }
          files.push(full)
        }
      })
    yield* walk(root, 0)
    return { files, warnings }
  })

/**
 * The agents of the Markdown files under `folder` (none when it does not exist), in path order; a
 * name defined twice keeps its first file, with a warning.
 *
 * @category Loading
 */
export const load = (folder: string): Effect.Effect<Loaded, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { files, warnings } = yield* markdownFiles(folder)
    const definitions: Array<Subagents.Definition> = []
    const fileOf = new Map<string, string>()
    for (const file of files) {
      const skip = (problem: string) => warnings.push(`skipped agent file ${file}: ${problem}; the other agents still load`)
      const size = yield* Effect.option(fs.stat(file))
      if (size._tag === "Some" && Number(size.value.size) > MAX_FILE_BYTES) {
        skip(`it is larger than ${MAX_FILE_BYTES / 1024} KiB`)
        continue
      }
      const text = yield* Effect.either(fs.readFileString(file))
      if (Either.isLeft(text)) {
        skip(`it could not be read (${text.left.message})`)
        continue
      }
      const parsed = yield* parse(text.right)
      if (Either.isLeft(parsed)) {
        skip(parsed.left.join("; "))
        continue
      }
      const { definition } = parsed.right
      const first = fileOf.get(definition.agentType)
      if (first !== undefined) {
        skip(`it defines agent ${definition.agentType} again (${first} defines it first)`)
        continue
      }
      fileOf.set(definition.agentType, file)
      definitions.push(definition)
      warnings.push(...parsed.right.warnings.map((w) => `agent file ${file}: ${w}`))
    }
    return { definitions, warnings }
  })
