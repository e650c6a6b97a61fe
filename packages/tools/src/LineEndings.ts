/**
 * A file's line endings, for the tools that change files. Read shows a CRLF file's lines without
 * their `\r`, so the model writes LF: Edit matches and Write writes in LF and the file keeps CRLF.
 * Only a file whose every line break is CRLF counts as CRLF; a file with mixed endings is left as
 * it is (matched byte for byte), since converting it would change lines the edit did not touch.
 *
 * @since 0.1.0
 */

/** Whether `text` has line breaks and every one of them is CRLF. @category Detecting */
export const isCrlf = (text: string): boolean => text.includes("\r\n") && !/(?:^|[^\r])\n/.test(text)

/** `text` with each CRLF turned into LF. @category Converting */
export const toLf = (text: string): string => text.replaceAll("\r\n", "\n")

/** `text` with each line break CRLF (those already CRLF kept). @category Converting */
export const toCrlf = (text: string): string => toLf(text).replaceAll("\n", "\r\n")
