/**
 * The texts of a compaction: the instruction appended to the conversation to ask for its summary
 * (an analysis pass in `<analysis>`, dropped, then the summary in `<summary>`, in nine sections),
 * what is kept of the answer ({@link summaryText}: the summary alone, without tags), and the notes
 * that open the compacted conversation (the summary, the transcript, the files read).
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

/** The first line of the summary instruction: how a summary request is told apart from a turn's. @category Constants */
export const HEADING = "Stop here and write a summary of this conversation; it will replace the conversation."

/** The instruction appended after the last message, with the user's extra instructions (`/compact ...`). @category Constructors */
export const prompt = (instructions?: string): string =>
  [
    HEADING,
    "",
    "Answer in text only. Do not call any tool: a tool call here is not run, and the summary would be lost. " +
    "Everything you need is already in the conversation above.",
    "",
    "The summary is all that will remain of the conversation besides its last exchange, so a reader who " +
    "never saw it must be able to carry on the work from it alone: the user's requests, the decisions " +
    "taken, the files and code involved, what failed and how it was fixed, and what is left to do.",
    "",
    "First think it through inside <analysis> tags: go over the conversation in order and note, for each " +
    "part, what the user asked, what you did, the files, code and commands involved, the errors met and " +
    "their fixes, and any feedback the user gave. This is a scratchpad and will be thrown away.",
    "",
    "Then write the summary inside <summary> tags, in these sections:",
    "",
    ...SECTIONS.map((title, i) => `${i + 1}. ${title}`),
    "",
    "In 'Primary Request and Intent' and wherever they apply, keep the user's constraints and " +
    "preferences word for word (quote them): what they asked you to do or never do, conventions, " +
    "limits, tools or styles to use or avoid. In 'Files and Code Sections' name every file read or " +
    "changed, why it matters, and the code snippets that the work depends on. In 'All user messages' " +
    "list every message the user wrote (not tool results). In 'Current Work' describe precisely what " +
    "was under way just before this request. In 'Optional Next Step' give the next step only if it " +
    "follows directly from the user's latest request, quoting that request verbatim.",
    ...(instructions !== undefined && instructions.trim() !== ""
      ? ["", `The user added these instructions for the summary:\n${instructions.trim()}`]
      : [])
  ].join("\n")

/** `text` without its `<tag>…</tag>` sections (an unclosed one runs to the end). */
const withoutSections = (text: string, tag: string): string => {
  const open = `<${tag}>`
  const close = `</${tag}>`
  let out = ""
  let from = 0
  for (;;) {
    const start = text.indexOf(open, from)
    if (start < 0) return out + text.slice(from)
    out += text.slice(from, start)
    const end = text.indexOf(close, start + open.length)
    if (end < 0) return out
    from = end + close.length
  }
}

/**
 * What is kept of the model's answer: the analysis dropped, the contents of `<summary>` (the first
 * one, or what follows an unclosed tag) without the tags; an answer without the tags is kept whole.
 *
 * @category Conversions
 */
export const summaryText = (answer: string): string => {
  const text = withoutSections(answer, "analysis")
  const start = text.indexOf("<summary>")
  if (start < 0) return text.replaceAll("</summary>", "").trim()
  const body = text.slice(start + "<summary>".length)
  const end = body.indexOf("</summary>")
  return (end < 0 ? body : body.slice(0, end)).trim()
}

/** What introduces the summary in the compacted conversation. */
const INTRO = "This conversation goes on from an earlier one that outgrew the context window. " +
  "Here is a summary of that earlier part, written before it was removed:\n\n"

/** How transcripts written before the summary lost its tags hold it. */
const TAGGED = /<summary>\n([\s\S]*)\n<\/summary>/

/** The text that opens the compacted conversation: the summary, introduced, without tags. @category Constructors */
export const continuation = (summary: string): string => INTRO + summary

/**
 * The summary in a text that opens a compacted conversation ({@link continuation}, or the tagged
 * form older transcripts hold), or `undefined` for any other text.
 *
 * @category Conversions
 */
export const summaryIn = (text: string): string | undefined =>
  text.startsWith(INTRO) ? text.slice(INTRO.length) : TAGGED.exec(text)?.[1]

/** Where the earlier conversation can still be read in full. @category Constructors */
export const transcriptNote = (path: string): string =>
  `The earlier conversation is kept word for word in the session's transcript, ${path} (JSON Lines, one ` +
  "entry per line). When you need a detail the summary leaves out (exact code, an error message, a command's " +
  "output), Read that file rather than guessing."

/** A file read before the compaction, too large to attach again: its name and size. @category Models */
export interface Listed {
  readonly path: string
  readonly bytes: number
}

/** The note naming the files read before the compaction that are not attached again. @category Constructors */
export const listedFiles = (files: ReadonlyArray<Listed>): string =>
  [
    "Files read before the compaction, not attached again because of their size (Read them again if you need them):",
    ...files.map((f) => `- ${f.path} (${f.bytes.toLocaleString("en-US")} bytes)`)
  ].join("\n")

/** The heading of a file read before the compaction and attached again, as it is on disk now. @category Constructors */
export const attachedFile = (path: string, content: string): string =>
  `${path}, read before the compaction, as it is on disk now:\n\n${content}`

/** Appended when nothing of the recent conversation is kept verbatim and it was waiting for an answer. @category Constants */
export const RESUME = "Go on with the task you were working on from where it stopped, without asking the user " +
  "anything first."
