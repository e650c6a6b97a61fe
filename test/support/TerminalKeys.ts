/**
 * tmux's key names (`Enter`, `C-c`, `Escape`, `Up`, `BSpace`, `Tab`, `M-b`, `F5`, ...) as the bytes a
 * terminal sends for them, so that tests name keys as a person would and as tmux's `send-keys` did.
 */

/** The terminal's modes that change what a key sends. */
export interface KeyModes {
  /** DECCKM: the application asked for "application" cursor keys (`ESC O A` instead of `ESC [ A`). */
  readonly applicationCursorKeys: boolean
}

const ESC = "\x1b"

const plain: Record<string, string> = {
  Enter: "\r",
  Tab: "\t",
  BTab: `${ESC}[Z`,
  Escape: ESC,
  Space: " ",
  BSpace: "\x7f",
  DC: `${ESC}[3~`,
  Delete: `${ESC}[3~`,
  IC: `${ESC}[2~`,
  Insert: `${ESC}[2~`,
  PPage: `${ESC}[5~`,
  PageUp: `${ESC}[5~`,
  NPage: `${ESC}[6~`,
  PageDown: `${ESC}[6~`,
  F1: `${ESC}OP`,
  F2: `${ESC}OQ`,
  F3: `${ESC}OR`,
  F4: `${ESC}OS`,
  F5: `${ESC}[15~`,
  F6: `${ESC}[17~`,
  F7: `${ESC}[18~`,
  F8: `${ESC}[19~`,
  F9: `${ESC}[20~`,
  F10: `${ESC}[21~`,
  F11: `${ESC}[23~`,
  F12: `${ESC}[24~`
}

/** The cursor keys: their final byte after `ESC [` (normal mode) or `ESC O` (application mode). */
const cursor: Record<string, string> = { Up: "A", Down: "B", Right: "C", Left: "D", Home: "H", End: "F" }

/** The bytes of `C-x`: the control character of a letter or of one of `@[\]^_ ?`. */
const control = (key: string): string | undefined => {
  if (key === "?") return "\x7f"
  const code = key.toUpperCase().charCodeAt(0)
  return key.length === 1 && code >= 0x40 && code <= 0x5f ? String.fromCharCode(code & 0x1f) : undefined
}

/**
 * The bytes a terminal sends for one tmux key name; anything that is not a key name is text sent as
 * it is, as `tmux send-keys` does. `M-` (Meta) prefixes Escape; `C-` (Ctrl) takes a letter.
 */
export const bytes = (key: string, modes: KeyModes): string => {
  const known = plain[key]
  if (known !== undefined) return known
  const arrow = cursor[key]
  if (arrow !== undefined) return `${ESC}${modes.applicationCursorKeys ? "O" : "["}${arrow}`
  const meta = /^M-(.+)$/.exec(key)
  if (meta !== null) return ESC + bytes(meta[1]!, modes)
  const ctrl = /^C-(.)$/.exec(key)
  const controlled = ctrl === null ? undefined : control(ctrl[1]!)
  if (controlled !== undefined) return controlled
  return key
}
