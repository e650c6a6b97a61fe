/**
 * Context assembly: the default system prompt of a session. The stable part is the base
 * instructions; the dynamic part holds, in order, the project instructions (`ProjectInstructions`),
 * memory (an embedder's, if any), and the environment (`Environment`, then `GitContext` inside a
 * repository). Files, memory and git are read in parallel.
 *
 * The dynamic part has soft budgets, in tokens (a token per four characters): instructions ~2,000,
 * memory ~1,500, environment ~500. A section may use what the others leave; only when the whole
 * dynamic part is over the sum are sections over their own budget cut, the environment first, then
 * memory, then instructions, each no further than its budget and no further than needed, with a
 * note where it was cut.
 *
 * A `Session` assembles its prompt once, at its first turn, and keeps it for the session (git runs
 * once, the date is the day's): nothing in the prompt changes from one request to the next, so the
 * prompt cache holds. The prompt carries the facts it was built from (`ContextSnapshot`); each turn
 * records it (`TurnEnvelope`), and a resumed session reuses the recorded prompt rather than
 * assembling again (a commit since would change the git section and lose the cached prefix).
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as os from "node:os"
import { homeConfig } from "../context/ContextManagement.js"
import { CHARS_PER_TOKEN } from "../context/TokenEstimate.js"
import * as BaseInstructions from "./BaseInstructions.js"
import * as ContextSnapshot from "./ContextSnapshot.js"
import * as Environment from "./Environment.js"
import * as GitContext from "./GitContext.js"
import * as ModelFacts from "./ModelFacts.js"
import * as ProjectInstructions from "./ProjectInstructions.js"
import * as SystemPrompt from "./SystemPrompt.js"

/**
 * The base instructions: the stable part of the default prompt, the same in every session (see
 * `BaseInstructions`).
 *
 * @category Constants
 */
export const BASE_INSTRUCTIONS: string = BaseInstructions.text

/** Soft budgets of the dynamic part, in tokens. @category Models */
export interface Budgets {
  readonly instructions: number
  readonly memory: number
  readonly environment: number
}

/** The default budgets. @category Constants */
export const DEFAULT_BUDGETS: Budgets = { instructions: 2_000, memory: 1_500, environment: 500 }

/** Which section is cut first when the dynamic part is over budget. @category Constants */
export const TRIM_ORDER: ReadonlyArray<keyof Budgets> = ["environment", "memory", "instructions"]

/** The dynamic sections' texts before budgets (`undefined`: no such section). @category Models */
export type Sections = { readonly [K in keyof Budgets]: string | undefined }

const tokensOf = (text: string | undefined): number => text === undefined ? 0 : Math.ceil(text.length / CHARS_PER_TOKEN)

const noun: Record<keyof Budgets, string> = {
  instructions: "the instructions",
  memory: "the memory",
  environment: "the environment"
}

/**
 * `text` cut to about `tokens` tokens, at a line end where there is one in the second half, with
 * a note saying so.
 */
const cut = (text: string, tokens: number, kind: keyof Budgets): string => {
  if (kind === "instructions") return cutFront(text, tokens)
  const left = text.length
  const note = (n: number) =>
    `\n[... ${noun[kind]} cut here to fit the prompt's budget (~${tokens.toLocaleString("en-US")} tokens); ` +
    `${n.toLocaleString("en-US")} characters left out]`
  const room = Math.max(0, tokens * CHARS_PER_TOKEN - note(left).length)
  const newline = text.lastIndexOf("\n", room)
  const end = newline >= room / 2 ? newline : room
  return text.slice(0, end) + note(left - end)
}

/**
 * The instructions cut to about `tokens` tokens from their start (after the section's header): the
 * files are listed the most general first, so those go first; the cut starts at a line start where
 * there is one in the first half of what is left out, with a note saying so.
 */
const cutFront = (text: string, tokens: number): string => {
  const header = text.startsWith(ProjectInstructions.HEADER) ? ProjectInstructions.HEADER : ""
  const body = text.slice(header.length)
  const note = (n: number) =>
    `\n\n[... the most general instructions cut here to fit the prompt's budget (~${tokens.toLocaleString("en-US")} ` +
    `tokens); ${n.toLocaleString("en-US")} characters left out; Read the instruction files themselves for the ` +
    "full text ...]\n"
  const room = Math.max(0, tokens * CHARS_PER_TOKEN - header.length - note(body.length).length)
  const from = body.length - room
  const newline = body.indexOf("\n", from)
  const start = newline >= 0 && newline - from <= room / 2 ? newline + 1 : from
  return header + note(start) + body.slice(start)
}

/**
 * The sections within the budgets (see the module's description): cut only when the total is over
 * the sum of the budgets, in {@link TRIM_ORDER}, each to no less than its budget. Returns the
 * sections and the names of those cut.
 *
 * @category Budgets
 */
export const fitToBudgets = (
  sections: Sections,
  budgets: Budgets = DEFAULT_BUDGETS
): { readonly sections: Sections; readonly cut: ReadonlyArray<keyof Budgets> } => {
  const out: { -readonly [K in keyof Budgets]: string | undefined } = { ...sections }
  const limit = budgets.instructions + budgets.memory + budgets.environment
  const total = () => tokensOf(out.instructions) + tokensOf(out.memory) + tokensOf(out.environment)
  const cutNames: Array<keyof Budgets> = []
  for (const kind of TRIM_ORDER) {
    const over = total() - limit
    if (over <= 0) break
    const text = out[kind]
    const size = tokensOf(text)
    if (text === undefined || size <= budgets[kind]) continue
    out[kind] = cut(text, Math.max(budgets[kind], size - over), kind)
    cutNames.push(kind)
  }
  return { sections: out, cut: cutNames }
}

/** Options of the assembly. @category Models */
export interface Options {
  /** The stable part (default {@link BASE_INSTRUCTIONS}). */
  readonly base?: string | undefined
  /** `$KEEL_HOME`, whose `KEEL.md` (and `CLAUDE.md`) hold the user's instructions for every project. */
  readonly home?: string | undefined
  /** The user's home folder: its `.claude/CLAUDE.md` is the user's too, and `~/` imports resolve there. */
  readonly userHome?: string | undefined
  /** Budgets of the dynamic part (each defaults to {@link DEFAULT_BUDGETS}'). */
  readonly budgets?: Partial<Budgets> | undefined
  /** The session's memory, if the embedder keeps one (its section comes after the instructions). */
  readonly memory?: ((cwd: string) => Effect.Effect<string | undefined>) | undefined
  /** Git options, or `false` for no git context. */
  readonly git?: GitContext.Options | false | undefined
  /** The platform, OS version and shell the environment states instead of this machine's (for tests). */
  readonly host?: Environment.Host | undefined
  /** Names and knowledge cutoffs of models, for the environment (default `ModelFacts.defaultTable`). */
  readonly models?: ModelFacts.Table | undefined
}

/** What a session tells the assembly besides its working directory. @category Models */
export interface Session {
  /** The session's model id: the environment names it (and its knowledge cutoff, where known). */
  readonly model?: string | undefined
}

/** @category Models */
export interface Service {
  /**
   * The system prompt for a session in `cwd`, read now: the caller keeps it for the session
   * (`Session` does). A string is sent as it is, all of it the stable part.
   */
  readonly assemble: (cwd: string, session?: Session) => Effect.Effect<SystemPrompt.SystemPrompt | string>
}

/** @category Context */
export class ContextAssembly extends Context.Tag("@keel/core/ContextAssembly")<ContextAssembly, Service>() {}

/** The assembly over the file system and the git command. @category Constructors */
export const make = (
  options: Options = {}
): Effect.Effect<Service, never, FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor>()
    const budgets: Budgets = { ...DEFAULT_BUDGETS, ...options.budgets }
    const assemble = (cwd: string, session: Session = {}) =>
      Effect.gen(function*() {
        const root = yield* GitContext.repositoryRoot(cwd)
        const [{ files, skipped }, memory, git, env] = yield* Effect.all([
          ProjectInstructions.gather(cwd, { root: Option.getOrUndefined(root), home: options.home, userHome: options.userHome }),
          options.memory === undefined ? Effect.succeed(undefined) : options.memory(cwd),
          options.git === false || Option.isNone(root)
            ? Effect.succeedNone
            : GitContext.collect(cwd, options.git ?? {}),
          Environment.collect(cwd, { isGitRepository: Option.isSome(root), model: session.model, host: options.host })
        ], { concurrency: "unbounded" })
        const environment = Option.match(git, {
          onNone: () => Environment.render(env, options.models),
          onSome: (g) => `${Environment.render(env, options.models)}\n\n${GitContext.render(g)}`
        })
        const hasMemory = memory !== undefined && memory.trim().length > 0
        const fitted = fitToBudgets({
          instructions: Option.getOrUndefined(ProjectInstructions.render(files)),
          memory: hasMemory ? `# Memory\n\n${memory.trim()}` : undefined,
          environment
        }, budgets)
        const dynamic = (["instructions", "memory", "environment"] as const).flatMap((name) => {
          const text = fitted.sections[name]
          return text === undefined ? [] : [SystemPrompt.section(name, text)]
        })
        const snapshot = ContextSnapshot.make({
          files,
          skipped,
          memory: hasMemory,
          environment: env,
          git: Option.getOrUndefined(git),
          cut: fitted.cut
        })
        return SystemPrompt.make([SystemPrompt.section("base", options.base ?? BASE_INSTRUCTIONS)], dynamic, snapshot)
      }).pipe(Effect.provide(context))
    return ContextAssembly.of({ assemble })
  })

/**
 * A short prompt of its own, without files, git or environment: who the agent is, and its working
 * directory. For embedders who bring their own instructions, and for tests.
 *
 * @category Constructors
 */
export const minimalPrompt = (cwd: string): string =>
  [
    "You are Keel, an agent that helps people with software engineering tasks.",
    "Use the tools you are given to look at the files you need instead of guessing, then answer concisely.",
    `The working directory is ${cwd}.`
  ].join("\n")

/** The assembly of {@link minimalPrompt}: nothing read, nothing run. @category Constructors */
export const minimal: Service = ContextAssembly.of({
  assemble: (cwd) => Effect.succeed(minimalPrompt(cwd))
})

/** {@link minimal} as a layer. @category Layers */
export const layerMinimal: Layer.Layer<ContextAssembly> = Layer.succeed(ContextAssembly, minimal)

/** The assembly layer. @category Layers */
export const layer = (
  options: Options = {}
): Layer.Layer<ContextAssembly, never, FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor> =>
  Layer.effect(ContextAssembly, make(options))

/**
 * {@link layer} with the user's instructions from `~/.claude/CLAUDE.md` and `$KEEL_HOME` (default
 * `~/.keel`). @category Layers
 */
export const layerConfig: Layer.Layer<
  ContextAssembly,
  ConfigError.ConfigError,
  FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor
> = Layer.unwrapEffect(Effect.map(homeConfig, (home) => layer({ home, userHome: os.homedir() })))
