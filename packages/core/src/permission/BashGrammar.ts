/**
 * The bash grammar (tree-sitter-bash, compiled to WebAssembly, run by web-tree-sitter): loaded once,
 * on the first Bash call judged, so `keel` starts without it. Loading is asynchronous; parsing is
 * synchronous once {@link ready} has run. When the grammar cannot be loaded, {@link parse} answers
 * `undefined` and every Bash call is "cannot analyse": it never matches an allow rule.
 *
 * The wasm files are looked up next to the running module first (the CLI bundle copies them there),
 * then through the packages' own resolution (the unbundled build and the tests).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import type { Node, Parser as TSParser } from "web-tree-sitter"

/** Where a wasm file is: beside this module (bundled), else resolved from its package. */
const locate = (file: string, specifier: string): string => {
  const beside = fileURLToPath(new URL(`./${file}`, import.meta.url))
  return fs.existsSync(beside) ? beside : createRequire(import.meta.url).resolve(specifier)
}

let parser: TSParser | undefined
let loading: Promise<void> | undefined
let failure: string | undefined

const load = async (): Promise<void> => {
  try {
    const { Language, Parser } = await import("web-tree-sitter")
    const runtime = locate("tree-sitter.wasm", "web-tree-sitter/tree-sitter.wasm")
    await Parser.init({ locateFile: () => runtime })
    const bash = await Language.load(locate("tree-sitter-bash.wasm", "tree-sitter-bash/tree-sitter-bash.wasm"))
    const made = new Parser()
    made.setLanguage(bash)
    parser = made
  } catch (e) {
    failure = e instanceof Error ? e.message : String(e)
  }
}

/**
 * Loads the grammar, once per process (later calls wait for the same load). Never fails: a load
 * that failed leaves {@link parse} answering `undefined` (see {@link loadFailure}).
 *
 * @category Loading
 */
export const ready: Effect.Effect<void> = Effect.promise(() => (loading ??= load()))

/** Starts loading the grammar in the background, if not started yet. @category Loading */
export const preload = (): void => {
  void (loading ??= load())
}

/** Why the grammar could not be loaded, if it could not. @category Loading */
export const loadFailure = (): string | undefined => failure

/**
 * `judge` applied to the syntax tree of `source` (the tree is freed after), or `undefined` when the
 * grammar is not loaded (yet, or at all): the caller treats that as "cannot analyse". A call before
 * {@link ready} starts the load for the next one.
 *
 * @category Parsing
 */
export const withTree = <A>(source: string, judge: (root: Node) => A): A | undefined => {
  if (parser === undefined) {
    preload()
    return undefined
  }
  const tree = parser.parse(source)
  if (tree === null) return undefined
  try {
    return judge(tree.rootNode)
  } finally {
    tree.delete()
  }
}
