/**
 * What a running tool call reports besides its result, in the kernel's own terms: a subagent's
 * prompt and the events of its turn. The session projects them to SDK messages (with
 * `parent_tool_use_id` set to the call's id); the tool never speaks a wire format.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { UserMessage } from "../message/Message.js"
import type { TurnEvent } from "../turn/TurnEvent.js"

/** @category Models */
export type ToolEvent = Data.TaggedEnum<{
  /** The prompt a subagent's conversation starts with. */
  SubagentPrompt: { readonly message: UserMessage }
  /** An event of a subagent's turn: its answers, its tool results, its tools' progress. */
  SubagentEvent: { readonly event: TurnEvent }
}>

/** Constructors and matchers for `ToolEvent`. @category Constructors */
export const ToolEvent = Data.taggedEnum<ToolEvent>()
