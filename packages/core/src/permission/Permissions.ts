/**
 * The permission check every tool call goes through before it runs. Modes and rules follow Claude
 * Code: `deny` rules beat `ask` rules beat `allow` rules; `bypassPermissions` allows everything not
 * denied; `plan` allows only read-only tools; `acceptEdits` allows the file-editing tools; read-only
 * tools are allowed by default; everything else asks. An `ask` goes to the embedder's `canUseTool`
 * callback when there is one; without one (headless), it is denied with its reason. `dontAsk` denies
 * whatever would ask. File tools are allowed without a rule only inside the workspace (the working
 * directory and `--add-dir` folders, symlinks resolved). Writes to protected paths (settings folders,
 * `.git/`, shell start-up files: see `ProtectedPaths`) ask in every mode, `bypassPermissions` too.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Actions } from "../action/Actions.js"
import * as ToolOutputDir from "../tool/ToolOutputDir.js"
import * as BashGrammar from "./BashGrammar.js"
import * as PathBoundary from "./PathBoundary.js"
import * as PermissionRule from "./PermissionRule.js"
import * as PermissionUpdate from "./PermissionUpdate.js"
import * as ProtectedPaths from "./ProtectedPaths.js"

/** Permission modes (Claude Code's names). @category Models */
export type Mode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk"

/** Every mode, for validation. @category Constants */
export const MODES: ReadonlyArray<Mode> = ["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"]

/** The rules and the mode. @category Models */
export interface Config {
  readonly mode: Mode
  readonly allow: ReadonlyArray<PermissionRule.Rule>
  readonly deny: ReadonlyArray<PermissionRule.Rule>
  readonly ask: ReadonlyArray<PermissionRule.Rule>
  /** Folders besides the working directory that file tools may use without asking (`--add-dir`). */
  readonly additionalDirectories?: ReadonlyArray<string> | undefined
  /**
   * Whether `setMode` may switch into `bypassPermissions` although the session did not start in it
   * (`--allow-dangerously-skip-permissions`, the Agent SDK's `allowDangerouslySkipPermissions`).
   */
  readonly bypassAvailable?: boolean | undefined
}

/**
 * Whether a file tool's call stays inside the workspace: the working directory and the additional
 * directories, symlinks resolved (a link inside that points outside is outside); for `Glob` the
 * pattern's fixed prefix counts (`../outside/*`, `/etc/*`). Calls of other tools are inside.
 *
 * @category Deciding
 */
export const insideWorkspace = (config: Config, request: Pick<Request, "toolName" | "input" | "cwd">): boolean => {
  const target = PermissionRule.targetPath(request.toolName, request.input, request.cwd)
  if (target === undefined) return true
  // Resolved once, for both questions.
  const real = PathBoundary.realPath(target)
  if (PathBoundary.roots(request.cwd, config.additionalDirectories).some((root) => PathBoundary.within(root, real))) return true
  // Output a tool spilled (Bash's full output) is the session's own: Read may read it back.
  return request.toolName === "Read" && ToolOutputDir.contains(real)
}

/** The tools `acceptEdits` allows. @category Constants */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"])

/**
 * Tools that change only the session's own state (`TodoWrite`: its task list), nothing outside it:
 * allowed without a rule in every mode, as read-only tools are (Claude Code never asks for them);
 * a `deny` or `ask` rule naming them still applies.
 *
 * @category Constants
 */
export const SESSION_STATE_TOOLS: ReadonlySet<string> = new Set(["TodoWrite", "update_goal"])

/** The outcome of a check. @category Models */
export type Decision =
  | {
    readonly _tag: "Allow"
    readonly updatedInput?: unknown
    /** Changes to the policy that came with the answer, applied before the call runs. */
    readonly updatedPermissions?: ReadonlyArray<PermissionUpdate.PermissionUpdate> | undefined
  }
  | { readonly _tag: "Deny"; readonly message: string }

/** What the embedder's callback answers (the Agent SDK's `PermissionResult`). @category Models */
export type CallbackResult =
  | {
    readonly behavior: "allow"
    readonly updatedInput?: Record<string, unknown> | undefined
    /** The SDK's `PermissionUpdate`s (checked: an answer with invalid ones denies the call). */
    readonly updatedPermissions?: ReadonlyArray<unknown> | undefined
  }
  | { readonly behavior: "deny"; readonly message: string; readonly interrupt?: boolean | undefined }

/**
 * Tools that exist to ask the user something (`AskUserQuestion`): they always ask, even in
 * `bypassPermissions`, and the answer (the permission's `updatedInput`) carries the user's reply.
 *
 * @category Constants
 */
export const USER_INTERACTION_TOOLS: ReadonlySet<string> = new Set(["AskUserQuestion"])

/** The embedder's `canUseTool`: asked for every call that would ask. @category Models */
export type CanUseTool = (
  toolName: string,
  input: unknown,
  options: {
    readonly toolUseId: string
    readonly reason: string
    readonly signal: AbortSignal
    /** What the host may remember if it allows ("always allow"; the SDK's `suggestions`). */
    readonly suggestions?: ReadonlyArray<PermissionUpdate.PermissionUpdate> | undefined
  }
) => Promise<CallbackResult>

/** A mode switch that is not allowed. @category Errors */
export class ModeRefused extends Schema.TaggedError<ModeRefused>("@keel/Permissions/ModeRefused")(
  "ModeRefused",
  { mode: Schema.String, reason: Schema.String }
) {
  override get message() {
    return `Switching to permission mode ${this.mode} was refused: ${this.reason}.`
  }
}

/** What is being checked. @category Models */
export interface Request {
  readonly toolName: string
  readonly input: unknown
  readonly isReadOnly: boolean
  readonly toolUseId: string
  readonly cwd: string
  /** Ask even where the policy would allow, saying this (a PreToolUse hook's `ask`); a denial still denies. */
  readonly forceAsk?: string | undefined
}

/** @category Models */
export interface Service {
  /** The policy in force (its mode is the one `setMode` last set). */
  readonly config: Config
  readonly check: (request: Request) => Effect.Effect<Decision>
  /**
   * Switches the mode for the calls checked after it (a host's `set_permission_mode`). Switching
   * into `bypassPermissions` is refused unless the session started in it or its config makes it
   * available (`bypassAvailable`): no request alone can turn the checks off.
   */
  readonly setMode: (mode: Mode) => Effect.Effect<void, ModeRefused>
  /**
   * Applies `updates` to the policy for the calls checked after it (the REPL's `/permissions`);
   * answers what was refused and why (see `PermissionUpdate.apply`). Nothing is written to a file.
   */
  readonly update: (updates: ReadonlyArray<PermissionUpdate.PermissionUpdate>, cwd: string) => Effect.Effect<ReadonlyArray<string>>
}

/** @category Context */
export class Permissions extends Context.Tag("@keel/core/Permissions")<Permissions, Service>() {}

/** The decision before any callback: allow, deny, or ask (with why). @category Deciding */
export const decide = (
  config: Config,
  request: Request
): { readonly _tag: "Allow" } | { readonly _tag: "Deny" | "Ask"; readonly reason: string } => {
  const { cwd, input, toolName } = request
  // Read deny rules also deny the tools that read on Read's terms (Grep, Glob) where they cover their path.
  const denied = config.deny.find((r) =>
    PermissionRule.matches(r, toolName, input, cwd) || PermissionRule.coversRead(r, toolName, input, cwd)
  )
  if (denied !== undefined) return { _tag: "Deny", reason: `the rule ${PermissionRule.format(denied)} denies it` }
  // A tool whose whole point is the user's answer asks in every mode (nobody else can answer it).
  if (USER_INTERACTION_TOOLS.has(toolName)) {
    const reason = `${toolName} needs the user's answer`
    return config.mode === "dontAsk" ? { _tag: "Deny", reason } : { _tag: "Ask", reason }
  }
  // Writes that could raise the model's own future permissions (settings, `.git/`, shell start-up
  // files) ask in every mode unless a rule names the exact file.
  const guarded = ProtectedPaths.check(config.allow, request)
  if (guarded !== undefined) {
    return config.mode === "dontAsk" || config.mode === "plan" ? { _tag: "Deny", reason: guarded } : { _tag: "Ask", reason: guarded }
  }
  if (config.mode === "bypassPermissions") return { _tag: "Allow" }
  const asked = config.ask.find((r) => PermissionRule.matches(r, toolName, input, cwd))
  if (asked !== undefined) return { _tag: "Ask", reason: `the rule ${PermissionRule.format(asked)} asks first` }
  if (PermissionRule.allows(config.allow, toolName, input, cwd) !== undefined) return { _tag: "Allow" }
  if (!insideWorkspace(config, request)) {
    const reason = `${toolName} would use a path outside the working directory (${cwd}) and the added directories`
    return config.mode === "dontAsk" || config.mode === "plan" ? { _tag: "Deny", reason } : { _tag: "Ask", reason }
  }
  // An MCP tool's read-only hint is its server's claim, not the user's: as in Claude Code, MCP tools
  // run only when a rule (or the mode) allows them.
  const mcp = PermissionRule.isMcpTool(toolName)
  if ((request.isReadOnly && !mcp) || SESSION_STATE_TOOLS.has(toolName)) return { _tag: "Allow" }
  if (config.mode === "plan") {
    return {
      _tag: "Deny",
      reason: mcp ? "plan mode runs MCP tools only when a rule allows them" : "plan mode allows only read-only tools"
    }
  }
  if (config.mode === "acceptEdits" && EDIT_TOOLS.has(toolName)) return { _tag: "Allow" }
  const reason = `${toolName} needs permission and no rule allows this call`
  return config.mode === "dontAsk" ? { _tag: "Deny", reason } : { _tag: "Ask", reason }
}

/**
 * Who answers the calls that would ask: given the request and why it asks, the decision. A
 * `CanUseTool` callback is one (see {@link fromCallback}); `Actions` is another (see
 * {@link layerAsking}).
 *
 * @category Models
 */
export type Asker = (request: Request, reason: string) => Effect.Effect<Decision>

const decodeUpdates = Schema.decodeUnknownEither(Schema.Array(PermissionUpdate.PermissionUpdate))

/**
 * A decision from the Agent SDK's answer shape: allow (with an optional new input and policy
 * updates), or deny. An allow whose `updatedPermissions` are not valid updates denies: the host
 * meant something Keel cannot do, so nothing runs on a half-understood answer.
 *
 * @category Deciding
 */
export const decisionOf = (answer: CallbackResult): Decision => {
  if (answer.behavior === "deny") return { _tag: "Deny", message: answer.message }
  const updates = answer.updatedPermissions === undefined ? undefined : decodeUpdates(answer.updatedPermissions)
  if (updates !== undefined && updates._tag === "Left") {
    return {
      _tag: "Deny",
      message: `The permission answer was not used: its updatedPermissions are not valid (${
        ParseResult.TreeFormatter.formatErrorSync(updates.left).replace(/\s+/g, " ")
      }).`
    }
  }
  return {
    _tag: "Allow",
    ...(answer.updatedInput !== undefined ? { updatedInput: answer.updatedInput } : {}),
    ...(updates !== undefined && updates.right.length > 0 ? { updatedPermissions: updates.right } : {})
  }
}

/** The asker that calls the embedder's `canUseTool`; a callback that fails denies. @category Constructors */
export const fromCallback = (canUseTool: CanUseTool): Asker => (request, reason) =>
  Effect.tryPromise({
    try: (signal) =>
      canUseTool(request.toolName, request.input, {
        toolUseId: request.toolUseId,
        reason,
        signal,
        suggestions: PermissionUpdate.suggestionsFor(request.toolName, request.input)
      }),
    catch: (e) => e
  }).pipe(
    Effect.map(decisionOf),
    Effect.catchAll((e) =>
      Effect.succeed<Decision>({
        _tag: "Deny",
        message: `Permission to use ${request.toolName} was denied: the permission callback failed (${String(e)}).`
      })
    )
  )

/** Options of {@link makeAsking}. @category Models */
export interface AskingOptions {
  /**
   * Keeps the policy updates an answer gave for a settings file (`userSettings`,
   * `projectSettings`, `localSettings`); without it they last as long as the session.
   */
  readonly persist?: (
    updates: ReadonlyArray<PermissionUpdate.PermissionUpdate>,
    cwd: string
  ) => Effect.Effect<void, { readonly message: string }>
}

/**
 * The service for `config`. Calls that would ask go to `asker` when given, and are denied (with
 * the reason and the rule to add) when not.
 *
 * @category Constructors
 */
export const makeAsking = (config: Config, asker: Asker | undefined, options: AskingOptions = {}): Service => {
  let current = config
  // An answer's policy updates, applied before its call runs; those kept in settings files are
  // handed to `persist` (a failure to write is a warning: the session has them either way).
  const applyUpdates = (request: Request, decision: Decision): Effect.Effect<Decision> => {
    if (decision._tag !== "Allow" || decision.updatedPermissions === undefined) return Effect.succeed(decision)
    const updates = decision.updatedPermissions
    const applied = PermissionUpdate.apply(current, updates, {
      cwd: request.cwd,
      bypassAllowed: config.mode === "bypassPermissions" || config.bypassAvailable === true
    })
    current = applied.config
    const kept = updates.filter((u) => PermissionUpdate.persisted(u.destination))
    return Effect.as(
      Effect.all([
        applied.refused.length > 0
          ? Effect.logWarning(`permission updates not applied: ${applied.refused.join("; ")}`)
          : Effect.void,
        kept.length > 0 && options.persist !== undefined
          ? options.persist(kept, request.cwd).pipe(
            Effect.catchAll((e) => Effect.logWarning(`permission updates not saved: ${e.message}`))
          )
          : Effect.void
      ], { discard: true }),
      decision
    )
  }
  return Permissions.of({
    get config() {
      return current
    },
    setMode: (mode) =>
      mode === "bypassPermissions" && config.mode !== "bypassPermissions" && config.bypassAvailable !== true
        ? Effect.fail(new ModeRefused({ mode, reason: "the session did not start in bypassPermissions" }))
        : Effect.sync(() => {
          current = { ...current, mode }
        }),
    update: (updates, cwd) =>
      Effect.sync(() => {
        const applied = PermissionUpdate.apply(current, updates, {
          cwd,
          bypassAllowed: config.mode === "bypassPermissions" || config.bypassAvailable === true
        })
        current = applied.config
        return applied.refused
      }),
    // A Bash call is judged on its syntax tree: the grammar loads on the first one.
    check: (request) => Effect.zipRight(request.toolName === "Bash" ? BashGrammar.ready : Effect.void, Effect.suspend((): Effect.Effect<Decision> => {
      const decided = decide(current, request)
      const decision = request.forceAsk !== undefined && decided._tag === "Allow"
        ? { _tag: "Ask" as const, reason: request.forceAsk }
        : decided
      switch (decision._tag) {
        case "Allow":
          return Effect.succeed({ _tag: "Allow" })
        case "Deny":
          return Effect.succeed({ _tag: "Deny", message: `Permission to use ${request.toolName} was denied: ${decision.reason}.` })
        case "Ask":
          return asker !== undefined ? Effect.flatMap(asker(request, decision.reason), (d) => applyUpdates(request, d)) : Effect.succeed({
            _tag: "Deny",
            message: `Permission to use ${request.toolName} was denied: ${decision.reason}, and nobody can be asked ` +
              (ProtectedPaths.check(current.allow, request) !== undefined
                ? "in this mode."
                : `in this mode. Allow it with --allowedTools "${request.toolName}" or a rule in .keel/settings.json.`)
          })
      }
    }))
  })
}

/**
 * The service for `config`, calls that would ask going to the embedder's `canUseTool` (denied
 * without one).
 *
 * @category Constructors
 */
export const make = (config: Config, canUseTool?: CanUseTool, options: AskingOptions = {}): Service =>
  makeAsking(config, canUseTool === undefined ? undefined : fromCallback(canUseTool), options)

/**
 * The asker over `Actions`: a call that would ask becomes a pending `permission` action, answered
 * by whoever fronts the runtime (`Actions.respond`).
 *
 * @category Constructors
 */
export const actionsAsker = (actions: Actions["Type"]): Asker => (request, reason) =>
  Effect.map(
    actions.ask({ kind: "permission", toolName: request.toolName, input: request.input, toolUseId: request.toolUseId, reason }),
    decisionOf
  )

/** A config from rule strings; unparseable rules are reported. @category Constructors */
export const config = (options: {
  readonly mode?: Mode | undefined
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
  readonly ask?: ReadonlyArray<string> | undefined
  readonly additionalDirectories?: ReadonlyArray<string> | undefined
  readonly bypassAvailable?: boolean | undefined
}): { readonly config: Config; readonly invalid: ReadonlyArray<string> } => {
  const invalid: Array<string> = []
  const rules = (texts: ReadonlyArray<string> = []) =>
    texts.flatMap((t) => {
      const rule = PermissionRule.parse(t)
      if (rule === undefined) invalid.push(t)
      return rule === undefined ? [] : [rule]
    })
  return {
    config: {
      mode: options.mode ?? "default",
      allow: rules(options.allow),
      deny: rules(options.deny),
      ask: rules(options.ask),
      additionalDirectories: options.additionalDirectories ?? [],
      ...(options.bypassAvailable === true ? { bypassAvailable: true } : {})
    },
    invalid
  }
}

/** The permissions layer. @category Layers */
export const layer = (config: Config, canUseTool?: CanUseTool): Layer.Layer<Permissions> =>
  Layer.succeed(Permissions, make(config, canUseTool))

/**
 * The permissions layer whose asks are pending actions (`Actions`): the REPL, a stream-json host,
 * `query()`'s `canUseTool` or an RPC client answers them with `respond`.
 *
 * @category Layers
 */
export const layerAsking = (config: Config): Layer.Layer<Permissions, never, Actions> =>
  Layer.effect(Permissions, Effect.map(Actions, (actions) => makeAsking(config, actionsAsker(actions))))

/**
 * Claude Code's default: mode `default`, no rules. Read-only tools run, edits and shell commands ask
 * (and are denied without a `canUseTool` to ask), file tools stay inside the working directory.
 *
 * @category Layers
 */
export const layerDefault: Layer.Layer<Permissions> = layer(config({}).config)

/**
 * No checks at all: every call runs, as with `--dangerously-skip-permissions` (mode
 * `bypassPermissions`, no rules), and the session reports that mode. For embedders who check calls
 * themselves, or run in a sandbox; the tool runtime requires a `Permissions` service, so running
 * without checks is always this explicit choice.
 *
 * @category Layers
 */
export const layerAllowAll: Layer.Layer<Permissions> = layer(config({ mode: "bypassPermissions" }).config)
