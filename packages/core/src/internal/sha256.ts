/**
 * A sha256 of a text, as hex: how a turn envelope names its system prompt and a journal its
 * request bodies.
 *
 * @internal
 */
import { createHash } from "node:crypto"

/** A sha256 of `text` (UTF-8), as hex. @internal */
export const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")
