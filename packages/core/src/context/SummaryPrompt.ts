/**
 * The instructions for a compaction summary: Claude Code's nine sections, so that the summary keeps
 * what a long task needs to go on (the request, the files, the errors, every user message, the
 * pending work and the next step).
 *
 * @since 0.1.0
 */

/** The nine sections, in order. @category Constants */
export const SECTIONS = [
  "Primary Request and Intent",
  "Key Technical Concepts",
  "Files and Code Sections",
  "Errors and fixes",
  "Problem Solving",
  "All user messages",
  "Pending Tasks",
  "Current Work",
  "Optional Next Step"
] as const

/** The system prompt of the summary request. @category Constants */
export const SYSTEM = "You are a helpful AI assistant tasked with summarizing conversations."

/** The user message that asks for the summary, with the user's extra instructions (`/compact ...`). @category Constructors */
export const prompt = (instructions?: string): string =>
  [
    "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's " +
    "explicit requests and your previous actions. This summary will replace the conversation: it must keep " +
    "everything needed to continue the work without losing context.",
    "",
    "Answer with no tool calls. Write the summary in these sections:",
    "",
    ...SECTIONS.map((title, i) => `${i + 1}. ${title}`),
    "",
    "In 'Files and Code Sections' name every file examined or changed, with the code snippets that matter. " +
    "In 'All user messages' list every message the user wrote (not tool results). In 'Optional Next Step' " +
    "quote the most recent request verbatim where it applies.",
    ...(instructions !== undefined && instructions.trim() !== "" ? ["", `Additional instructions: ${instructions.trim()}`] : [])
  ].join("\n")

/** The text that introduces the summary in the compacted conversation. @category Constructors */
export const continuation = (summary: string): string =>
  "This session is being continued from a previous conversation that ran out of context. " +
  "The summary below covers the earlier portion of the conversation.\n\n" +
  `<summary>\n${summary}\n</summary>`

/** Appended when nothing of the recent conversation is kept verbatim. @category Constants */
export const RESUME = "Continue the conversation from where it left off without asking the user any further questions. " +
  "Continue with the last task that you were asked to work on."
