/**
 * Nested memory: the instruction files of folders below the working directory, sent to the model
 * when a tool first touches a file under them, as Claude Code does. A session starts with the
 * memory from the repository root down to the working directory (`MemoryLoader`); a folder below
 * it (`src/api/CLAUDE.md`) is read when a `Read`, `Edit` or `Write` call that ran (it was not denied;
 * it may have failed) names a file under it: each folder from the working directory down to the
 * file's own that was not read yet gives its files (`MemoryLoader.FOLDER_FILES`, with their
 * imports). Each file goes to the model once per session, as a text block of its own after the
 * round's tool results, in the same user message (Claude Code's placement). Files outside the
 * working directory bring none; `Glob` and `Grep` bring none (as in Claude Code).
 *
 * What a session was sent is a fact of its transcript: the first round that looks at a session
 * reads the blocks already in its conversation (a resumed session's included), and the memory it
 * started with, so neither comes twice.
 *
 * The turn loop consults the service after each round of tool calls; without it (the default
 * reference, {@link none}) no nested memory is sent.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as os from "node:os"
import { homeConfig } from "../context/ContextManagement.js"
import { type Message, TextBlock, type ToolUseBlock } from "../message/Message.js"
import { repositoryRoot } from "../prompt/GitContext.js"
import * as MemoryFile from "./MemoryFile.js"
import * as MemoryLoader from "./MemoryLoader.js"

/** The tools whose calls touch a file, and the input field naming it. @category Constants */
export const FILE_TOOLS: ReadonlyMap<string, string> = new Map([
  ["Read", "file_path"],
  ["Edit", "file_path"],
  ["Write", "file_path"]
])

/** The most characters of nested memory one round sends; a file past it is named, not sent. @category Constants */
export const MAX_ROUND_CHARS = 40_000

/** The most sessions whose state one service keeps (the oldest is dropped past it). @category Constants */
export const MAX_SESSIONS = 256

/** What the turn loop asks after a round of tool calls. @category Models */
export interface Request {
  readonly sessionId: string
  readonly cwd: string
  /** The round's calls that ran (not denied), in call order. */
  readonly calls: ReadonlyArray<ToolUseBlock>
  /** The conversation so far; read at a session's first round only. */
  readonly history: Effect.Effect<ReadonlyArray<Message>>
}

/** @category Models */
export interface Service {
  /** The text blocks to add after the round's tool results: the memory files not sent yet of the folders the calls touched. */
  readonly attach: (request: Request) => Effect.Effect<ReadonlyArray<TextBlock>>
}

/** No nested memory: what the turn loop uses when no layer provides one. @category Constructors */
export const none: Service = { attach: () => Effect.succeed([]) }

/** @category Context */
export class NestedMemory extends Context.Reference<NestedMemory>()("@keel/core/NestedMemory", {
  defaultValue: (): Service => none
}) {}

const PREFIX = "<system-reminder>\nInstructions from "

/** One memory file as the block the model reads. @category Rendering */
export const render = (file: MemoryFile.MemoryFile): TextBlock => {
  const why = file.importedFrom !== undefined
    ? `imported by ${file.importedFrom}`
    : "it applies to the files in its folder and below; where it disagrees with more general instructions, it wins"
  return new TextBlock({ text: `${PREFIX}${file.path}\n(${why})\n\n${file.content.trim()}\n</system-reminder>` })
}

/** A file named but not sent: the round's budget was spent. */
const renderOver = (file: MemoryFile.MemoryFile): TextBlock =>
  new TextBlock({
    text: `${PREFIX}${file.path}\n(not included: this round's instructions are over ${MAX_ROUND_CHARS.toLocaleString("en-US")} ` +
      `characters; read it with the Read tool)\n</system-reminder>`
  })

/** The memory files a conversation was sent already (the blocks {@link render} made), by path. @category Parsing */
export const sentIn = (messages: ReadonlyArray<Message>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const message of messages) {
    if (message.role !== "user" || typeof message.content === "string") continue
    for (const block of message.content) {
      const text = block.type === "text" && "text" in block ? block.text : undefined
      if (typeof text !== "string" || !text.startsWith(PREFIX)) continue
      const end = text.indexOf("\n", PREFIX.length)
      if (end > PREFIX.length) out.push(text.slice(PREFIX.length, end))
    }
  }
  return out
}

/** Options of {@link make}. @category Models */
export interface Options {
  /** `$KEEL_HOME` (the user's `KEEL.md`), as the session's memory was loaded with. */
  readonly home?: string | undefined
  /** The user's home folder (`~/.claude/CLAUDE.md`, `~/` imports). */
  readonly userHome?: string | undefined
}

interface SessionMemory {
  readonly ctx: MemoryFile.Context
  readonly collector: MemoryFile.Collector
  readonly visited: Set<string>
}

/** The folders from below `cwd` down to `dir`, the highest first; none when `dir` is not below `cwd`. */
const foldersBelow = (path: Path.Path, cwd: string, dir: string): ReadonlyArray<string> => {
  const rel = path.relative(cwd, dir)
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return []
  const out: Array<string> = []
  let current = cwd
  for (const segment of rel.split(path.sep)) {
    current = path.join(current, segment)
    out.push(current)
  }
  return out
}

/** The file a call touches, if its tool is one of {@link FILE_TOOLS}. */
const fileOf = (path: Path.Path, cwd: string, call: ToolUseBlock): string | undefined => {
  const field = FILE_TOOLS.get(call.name)
  const input = call.input as Record<string, unknown> | null
  const value = field !== undefined && input !== null && typeof input === "object" ? input[field] : undefined
  return typeof value === "string" && value.length > 0 ? path.resolve(cwd, value) : undefined
}

/** The nested memory service over the file system. @category Constructors */
export const make = (options: Options = {}): Effect.Effect<Service, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const sessions = new Map<string, SessionMemory>()
    const lock = yield* Effect.makeSemaphore(1)

    /** A session's state: what it started with and what its conversation was sent already. */
    const sessionOf = (request: Request) =>
      Effect.gen(function*() {
        const known = sessions.get(request.sessionId)
        if (known !== undefined) return known
        const ctx = yield* MemoryLoader.contextFor(request.cwd, options.userHome)
        const root = yield* repositoryRoot(request.cwd)
        const startup = yield* MemoryLoader.load(request.cwd, {
          root: Option.getOrUndefined(root),
          home: options.home,
          userHome: options.userHome
        })
        const sent = yield* Effect.forEach(sentIn(yield* request.history), (file) =>
          fs.realPath(file).pipe(Effect.orElseSucceed(() => file)))
        const startupReal = yield* Effect.forEach(startup.files, (f) =>
          fs.realPath(f.path).pipe(Effect.orElseSucceed(() => f.path), Effect.map((real) => ({ real, content: f.content }))))
        const state: SessionMemory = {
          ctx,
          collector: MemoryFile.collector([...startupReal, ...sent.map((real) => ({ real }))]),
          visited: new Set()
        }
        if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!)
        sessions.set(request.sessionId, state)
        return state
      })

    const attach = (request: Request): Effect.Effect<ReadonlyArray<TextBlock>> => {
      const cwd = path.resolve(request.cwd)
      const dirs = request.calls.flatMap((call) => {
        const file = fileOf(path, cwd, call)
        return file === undefined ? [] : foldersBelow(path, cwd, path.dirname(file))
      })
      if (dirs.length === 0) return Effect.succeed([])
      return lock.withPermits(1)(Effect.gen(function*() {
        const session = yield* sessionOf(request)
        const c = session.collector
        const before = c.files.length
        for (const dir of dirs) {
          if (session.visited.has(dir)) continue
          session.visited.add(dir)
          yield* MemoryLoader.includeFolder(session.ctx, c, dir)
        }
        let chars = 0
        return c.files.slice(before).map((file) => {
          chars += file.content.length
          return chars <= MAX_ROUND_CHARS ? render(file) : renderOver(file)
        })
      })).pipe(Effect.provide(context))
    }
    return NestedMemory.of({ attach })
  })

/** The service as a layer. @category Layers */
export const layer = (options: Options = {}): Layer.Layer<NestedMemory, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(NestedMemory, make(options))

/** {@link layer} with `$KEEL_HOME` (default `~/.keel`) and the user's home folder. @category Layers */
export const layerConfig: Layer.Layer<NestedMemory, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> = Layer
  .unwrapEffect(Effect.map(homeConfig, (home) => layer({ home, userHome: os.homedir() })))
