/**
 * The terminal of the REPL tests under its old name (it was tmux): see {@link ./Terminal.ts}, which
 * needs nothing but Node. Kept so that tests written against `Tmux.open` go on working.
 */
export * from "./Terminal.js"
