/**
 * The services a tool call runs with in a turn (`Tool.Services`), for tests that call tools
 * directly, outside a session: a fresh session state, a scripted model, no context stages and no
 * compaction, a tool registry, a permission policy (every call allowed unless given) and seeded ids.
 */
import { ContextManagement, Hooks, Ids, type Message, Permissions, SessionState, TestModel, type Tool, ToolRegistry } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Layer } from "effect"

/** What {@link callServices} can be given instead of its defaults. */
export interface Options {
  /** The model's script (default: empty, the model is not expected to be called). */
  readonly script?: ReadonlyArray<TestModel.ScriptItem> | undefined
  /** The tools of the turn (default none). */
  readonly tools?: ReadonlyArray<Tool.Any> | undefined
  /** The session's id (default `s`). */
  readonly sessionId?: string | undefined
  /** The conversation so far (default none). */
  readonly history?: ReadonlyArray<Message.Message> | undefined
  /** The permission policy (default `Permissions.layerAllowAll`: no checks). */
  readonly permissions?: Layer.Layer<Permissions.Permissions> | undefined
}

/** Every service of `Tool.Services`, and the scripted model's `TestModel` to read its requests. */
export const callServices = (options: Options = {}) =>
  Layer.mergeAll(
    TestModel.layer(options.script ?? []),
    ContextManagement.layerNone,
    ToolRegistry.layer(options.tools ?? []),
    options.permissions ?? Permissions.layerAllowAll,
    Ids.layerSeeded(Testing.SEED),
    Hooks.layerNone,
    Layer.effect(SessionState.SessionState, SessionState.make(options.sessionId ?? "s", options.history ?? []))
  )
