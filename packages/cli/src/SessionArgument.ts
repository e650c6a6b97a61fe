/**
 * A saved session named on the command line (`keel export`, `keel doctor`): a session id of the
 * working directory, or the path of a transcript file.
 *
 * @since 0.1.0
 */
import * as path from "node:path"

/** Whether the argument names a file rather than a session id (it holds a `/` or ends in `.jsonl`). @category Predicates */
export const isPath = (session: string): boolean =>
  session.includes("/") || session.includes(path.sep) || session.endsWith(".jsonl")

/** The session id a transcript's first entry names (else the file's name without `.jsonl`). @category Accessors */
export const sessionIdOf = (file: string, bytes: Uint8Array): string => {
  const end = bytes.indexOf(0x0a)
  try {
    const first = JSON.parse(new TextDecoder().decode(end === -1 ? bytes : bytes.subarray(0, end))) as { sessionId?: unknown }
    if (typeof first.sessionId === "string") return first.sessionId
  } catch {
    // Not JSON: the parse says where and why.
  }
  return path.basename(file, ".jsonl")
}
