/**
 * What a key does at the REPL's input line, decided from the key and the situation: whether a turn
 * runs, whether prompts are queued, whether the line holds a queued prompt pulled back for editing.
 * Pure, so the rules a user relies on are unit-tested apart from any terminal:
 *
 * - Enter submits (it runs now, or is queued while a turn runs); a line ending in `\` goes on to
 *   the next line instead, and so does Alt+Enter;
 * - ↑ on an empty line while prompts are queued pulls the last one back for editing; otherwise ↑/↓
 *   move between the lines of the text, then browse history;
 * - Esc drops a pulled-back prompt; otherwise it interrupts the running turn;
 * - Ctrl+C clears the line; on an empty line it interrupts the running turn, or, when none runs,
 *   warns, and a second Ctrl+C in a row exits;
 * - Ctrl+D on an empty line exits; Tab completes; the usual Emacs keys edit;
 * - Shift+Tab cycles the permission mode; Ctrl+O shows the last tool call's whole output;
 * - while the slash-command menu is open, ↑/↓ choose in it, Tab or Enter complete, Esc closes it.
 *
 * @since 0.1.0
 */
import * as InputLine from "./InputLine.js"

/** A key as readline's `keypress` events give it. @category Models */
export interface Key {
  readonly name?: string | undefined
  readonly ctrl?: boolean | undefined
  readonly meta?: boolean | undefined
  readonly shift?: boolean | undefined
  readonly sequence?: string | undefined
}

/** What the key depends on besides the line. @category Models */
export interface Situation {
  readonly running: boolean
  /** How many prompts wait in the queue. */
  readonly queued: number
  /** The last key was a Ctrl+C that warned (on an empty line, no turn running). */
  readonly exitArmed: boolean
  /** The slash-command menu is open (it lists at least one command). */
  readonly menu?: boolean | undefined
}

/** What to do. @category Models */
export type Command =
  /** Show this line. */
  | { readonly _tag: "Edit"; readonly line: InputLine.InputLine }
  /** Submit the line's text. */
  | { readonly _tag: "Submit"; readonly text: string }
  /** Pull the last queued prompt back into the (empty) line. */
  | { readonly _tag: "PullBack" }
  /** The pulled-back prompt is dropped: show this (empty) line. */
  | { readonly _tag: "Drop"; readonly line: InputLine.InputLine }
  | { readonly _tag: "Interrupt" }
  | { readonly _tag: "Complete" }
  /** Warn that a second Ctrl+C exits. */
  | { readonly _tag: "ArmExit" }
  | { readonly _tag: "Exit" }
  /** Clear the screen and draw again (Ctrl+L). */
  | { readonly _tag: "Redraw" }
  /** Switch to the next permission mode (Shift+Tab). */
  | { readonly _tag: "CycleMode" }
  /** Show the last tool call's whole output (Ctrl+O). */
  | { readonly _tag: "Expand" }
  /** Choose the menu's command `by` rows down (up when negative). */
  | { readonly _tag: "MenuMove"; readonly by: number }
  /** Complete the menu's chosen command (Tab; Enter, which submits it when it is already written out). */
  | { readonly _tag: "MenuAccept"; readonly enter: boolean }
  /** Close the menu until the text changes (Esc). */
  | { readonly _tag: "MenuClose" }
  | { readonly _tag: "Ignore" }

const edit = (line: InputLine.InputLine): Command => ({ _tag: "Edit", line })

/** Ctrl+ letter keys that only edit. */
const CTRL_EDITS: Readonly<Record<string, (line: InputLine.InputLine) => InputLine.InputLine>> = {
  a: InputLine.home,
  e: InputLine.end,
  b: InputLine.left,
  f: InputLine.right,
  h: InputLine.backspace,
  k: InputLine.killToEnd,
  u: InputLine.killToStart,
  w: InputLine.deleteWordBack,
  p: InputLine.up,
  n: InputLine.down,
  left: InputLine.wordLeft,
  right: InputLine.wordRight
}

/** Alt+ keys that only edit. */
const META_EDITS: Readonly<Record<string, (line: InputLine.InputLine) => InputLine.InputLine>> = {
  b: InputLine.wordLeft,
  f: InputLine.wordRight,
  d: InputLine.deleteWordForward,
  backspace: InputLine.deleteWordBack,
  left: InputLine.wordLeft,
  right: InputLine.wordRight
}

/** Named keys that only edit. */
const EDITS: Readonly<Record<string, (line: InputLine.InputLine) => InputLine.InputLine>> = {
  backspace: InputLine.backspace,
  delete: InputLine.deleteForward,
  left: InputLine.left,
  right: InputLine.right,
  home: InputLine.home,
  end: InputLine.end,
  down: InputLine.down
}

const enter = (line: InputLine.InputLine): Command => {
  if (line.text.slice(0, line.cursor).endsWith("\\")) return edit(InputLine.insert(InputLine.backspace(line), "\n"))
  if (InputLine.isBlank(line)) return edit(InputLine.clear(line))
  return { _tag: "Submit", text: line.text }
}

/** An empty line, as a drop when it held a pulled-back prompt. */
const cleared = (line: InputLine.InputLine): Command =>
  line.pulledBack ? { _tag: "Drop", line: InputLine.clear(line) } : edit(InputLine.clear(line))

const ctrlC = (line: InputLine.InputLine, situation: Situation): Command =>
  line.text !== ""
    ? cleared(line)
    : situation.running
    ? { _tag: "Interrupt" }
    : situation.exitArmed
    ? { _tag: "Exit" }
    : { _tag: "ArmExit" }

/** Text typed (or pasted) that goes into the line as it is. */
const isPrintable = (text: string | undefined): text is string =>
  text !== undefined && text !== "" && !/[\x00-\x1f\x7f]/.test(text)

/**
 * What `key` (with its `text`, as readline's `keypress` gives them) does to `line`.
 *
 * @category Deciding
 */
export const decide = (
  line: InputLine.InputLine,
  text: string | undefined,
  key: Key | undefined,
  situation: Situation
): Command => {
  const name = key?.name ?? ""
  if (name === "tab" && key?.shift === true) return { _tag: "CycleMode" }
  if (situation.menu === true && key?.ctrl !== true && key?.meta !== true) {
    if (name === "up" || name === "down") return { _tag: "MenuMove", by: name === "up" ? -1 : 1 }
    if (name === "tab") return { _tag: "MenuAccept", enter: false }
    if (name === "return" || name === "enter") return { _tag: "MenuAccept", enter: true }
    if (name === "escape") return { _tag: "MenuClose" }
  }
  if (key?.ctrl === true) {
    if (name === "c") return ctrlC(line, situation)
    if (name === "o") return { _tag: "Expand" }
    if (name === "d") return line.text === "" ? { _tag: "Exit" } : edit(InputLine.deleteForward(line))
    if (name === "l") return { _tag: "Redraw" }
    const edits = CTRL_EDITS[name]
    return edits !== undefined ? edit(edits(line)) : { _tag: "Ignore" }
  }
  if (key?.meta === true) {
    if (name === "return" || name === "enter") return edit(InputLine.insert(line, "\n"))
    if (name === "escape") return decide(line, undefined, { name }, situation)
    const edits = META_EDITS[name]
    return edits !== undefined ? edit(edits(line)) : { _tag: "Ignore" }
  }
  switch (name) {
    case "return":
    case "enter":
      return enter(line)
    case "up":
      return line.text === "" && situation.queued > 0 ? { _tag: "PullBack" } : edit(InputLine.up(line))
    case "escape":
      return line.pulledBack ? cleared(line) : situation.running ? { _tag: "Interrupt" } : { _tag: "Ignore" }
    case "tab":
      return { _tag: "Complete" }
  }
  const edits = EDITS[name]
  if (edits !== undefined) return edit(edits(line))
  return isPrintable(text) ? edit(InputLine.insert(line, text)) : { _tag: "Ignore" }
}
