/**
 * What answering "always" to a permission question allows, in permission-rule syntax, and the
 * update that adds exactly those rules to the session's policy (destination `session`: for the rest
 * of this session, never written to a settings file). A Bash command gives one rule per simple
 * command as written (`sleep 3 && touch x`: `Bash(sleep 3)`, `Bash(touch x)`), a file edit a rule
 * for that file (`Edit(./src/main.ts)`), any other tool the tool (`WebFetch`). The rules are checked
 * against the call before they are offered: when they would not allow it (a command the rules cannot
 * spell, a path with pattern characters) the REPL remembers the exact call instead, and says so.
 *
 * @since 0.1.0
 */
import { BashCommand, BashGrammar, PermissionRule, PermissionUpdate } from "@keel/core"
import * as Effect from "effect/Effect"
import * as path from "node:path"

/** What "always" allows. @category Models */
export type Always =
  /** These rules go into the session's policy. */
  | { readonly _tag: "Rules"; readonly rules: ReadonlyArray<string>; readonly update: PermissionUpdate.PermissionUpdate }
  /** No rule fits: the REPL allows this exact call again (`key`: the call as written). */
  | { readonly _tag: "ExactCall"; readonly key: string }

/** The key the REPL remembers an exact call by. @category Accessors */
export const exactKey = (toolName: string, input: unknown): string => `${toolName} ${JSON.stringify(input)}`

const FILE_TOOLS = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit"])

/** A word a rule can hold as it is (no spaces, quotes, parentheses or pattern stars). */
const spellable = (word: BashCommand.Word): boolean => word.literal && word.value !== "" && !/[\s"'()*\\]/.test(word.value)

/** The rule contents of a Bash command, one per simple command; `undefined` when one cannot be spelled. */
const bashContents = async (command: string): Promise<ReadonlyArray<string> | undefined> => {
  await Effect.runPromise(BashGrammar.ready)
  const analysis = BashCommand.analyse(command)
  if (analysis._tag === "Unanalysable" || analysis.commands.length === 0) return undefined
  const contents: Array<string> = []
  for (const words of analysis.commands) {
    if (words.length === 0 || !words.every(spellable)) return undefined
    const content = words.map((w) => w.value).join(" ")
    if (!contents.includes(content)) contents.push(content)
  }
  return contents
}

/** A file rule's pattern for `file`: `./relative` inside `cwd`, `//absolute` outside it. */
const filePattern = (file: string, cwd: string): string => {
  const rel = path.relative(cwd, file)
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? `./${rel}` : `/${file}`
}

/** The rules' contents that "always" would add for a call, before they are checked. */
const candidates = async (toolName: string, input: unknown, cwd: string): Promise<ReadonlyArray<string | undefined> | undefined> => {
  const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}
  if (toolName === "Bash") return typeof fields.command === "string" ? bashContents(fields.command) : undefined
  if (FILE_TOOLS.has(toolName)) {
    const field = PermissionRule.PATH_FIELDS[toolName]
    const value = field === undefined ? undefined : fields[field]
    return typeof value === "string" && !/[*?[\]{}()!]/.test(value) ? [filePattern(path.resolve(cwd, value), cwd)] : undefined
  }
  return toolName === "AskUserQuestion" ? undefined : [undefined]
}

/**
 * What "always" allows for this call: rules that allow it (checked with the policy's own matcher),
 * else the exact call.
 *
 * @category Deciding
 */
export const alwaysFor = async (toolName: string, input: unknown, cwd: string): Promise<Always> => {
  const exact: Always = { _tag: "ExactCall", key: exactKey(toolName, input) }
  const contents = await candidates(toolName, input, cwd).catch(() => undefined)
  if (contents === undefined || contents.length === 0) return exact
  const values = contents.map((c) => (c === undefined ? { toolName } : { toolName, ruleContent: c }))
  const rules = values.map(PermissionUpdate.ruleText)
  const parsed = rules.map(PermissionRule.parse)
  if (parsed.some((r) => r === undefined)) return exact
  if (PermissionRule.allows(parsed as Array<PermissionRule.Rule>, toolName, input, cwd) === undefined) return exact
  return { _tag: "Rules", rules, update: { type: "addRules", rules: values, behavior: "allow", destination: "session" } }
}

/** What "always" allows, as the question says it. @category Rendering */
export const describe = (always: Always): string =>
  always._tag === "Rules" ? always.rules.join(", ") : "this exact call"
