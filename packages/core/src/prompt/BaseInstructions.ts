/**
 * The base instructions of the default system prompt: who the agent is, how it works, what it
 * confirms first, how it reports. Written as Markdown in `text/*.md`, one file per section, and
 * compiled into `text/Texts.generated.ts` by `scripts/prompt-texts.mjs`. They are the stable part of
 * the prompt, identical in every session: nothing here depends on the session, the machine or the
 * date (the environment section, `Environment`, holds those).
 *
 * @since 0.1.0
 */
import * as Texts from "./text/Texts.generated.js"

/** The sections, in the order they are sent. @category Constants */
export const SECTIONS: ReadonlyArray<string> = [
  Texts.identity,
  Texts.taskApproach,
  Texts.askOrAct,
  Texts.care,
  Texts.security,
  Texts.reporting,
  Texts.planning,
  Texts.tools,
  Texts.context
]

/** The base instructions: the sections, separated by blank lines. @category Constants */
export const text: string = SECTIONS.join("\n\n")

/**
 * The sections a subagent that works on its own (`general-purpose`) follows: how to do a task, what
 * to confirm, security, reporting and tools, without those about talking to the user, asking,
 * planning and the prompt's context.
 *
 * @category Constants
 */
export const SUBAGENT_SECTIONS: ReadonlyArray<string> = [
  Texts.taskApproach,
  Texts.care,
  Texts.security,
  Texts.reporting,
  Texts.tools
]

/** The subagent's sections, separated by blank lines. @category Constants */
export const subagentText: string = SUBAGENT_SECTIONS.join("\n\n")
