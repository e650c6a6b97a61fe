/**
 * The permission mode as the REPL shows and cycles it: Shift+Tab goes default → acceptEdits →
 * plan → default (through bypassPermissions too when the session may use it: it started in it or
 * with `--allow-dangerously-skip-permissions`), and a row under the input line says which mode is
 * on (nothing in the default mode).
 *
 * @since 0.1.0
 */
import type { Permissions } from "@keel/core"
import type * as Style from "./Style.js"

/** The mode after `mode` on Shift+Tab; `bypassAllowed`: the session may switch into bypassPermissions. @category Cycling */
export const next = (mode: Permissions.Mode, bypassAllowed: boolean): Permissions.Mode => {
  const order: ReadonlyArray<Permissions.Mode> = bypassAllowed
    ? ["default", "acceptEdits", "plan", "bypassPermissions"]
    : ["default", "acceptEdits", "plan"]
  const at = order.indexOf(mode)
  // A mode outside the cycle (dontAsk) goes back to the first.
  return at === -1 ? order[0]! : order[(at + 1) % order.length]!
}

const HINT = "(shift+tab to cycle)"

/**
 * The row under the input line for `mode`: `undefined` in the default mode.
 *
 * @category Rendering
 */
export const indicator = (mode: Permissions.Mode, style: Pick<Style.Style, "dim" | "cyan" | "yellow" | "red">): string | undefined => {
  switch (mode) {
    case "acceptEdits":
      return `${style.cyan("⏵⏵ accept edits on")} ${style.dim(HINT)}`
    case "plan":
      return `${style.yellow("⏸ plan mode on")} ${style.dim(HINT)}`
    case "bypassPermissions":
      return `${style.red("⏵⏵ bypass permissions on")} ${style.dim(HINT)}`
    case "dontAsk":
      return `${style.yellow("⏵⏵ don't ask on")} ${style.dim(HINT)}`
    case "default":
      return undefined
  }
}
