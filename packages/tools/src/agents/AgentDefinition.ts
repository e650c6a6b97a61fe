/**
 * A custom subagent's definition as Claude Code takes it, read into a `Subagents.Definition`: the
 * Agent SDK's `AgentDefinition` (`--agents` JSON, `query()`'s and `initialize`'s `agents`) and the
 * frontmatter of a Markdown agent file (see `AgentFile`), which share their keys.
 *
 * Honoured: `description` (required), `prompt` (required; a file's body), `tools` (a list, or in a
 * file a comma-separated string; `*` or none: all of the parent's), `disallowedTools`, `model` (an
 * alias, an id, or `inherit`), `maxTurns`. Accepted because Keel already behaves so: `omitClaudeMd`
 * (a Keel subagent never gets the instruction files), `background: false`, and a file's `name` and
 * `color`. Refused by name, since Keel would run the agent without them: `mcpServers`, `skills`,
 * `initialPrompt`, `autoCompactWindow`, `memory`, `effort`, `permissionMode`, `hooks`, `isolation`,
 * `observer`, `observerMessage`, `criticalSystemReminder_EXPERIMENTAL`, `background: true`, and a
 * tool rule with a pattern (`Bash(git:*)`) in `tools`. Other keys are ignored with a warning, as
 * Claude Code ignores them.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Subagents from "../Subagents.js"

/** Keys Keel cannot honour: an agent that sets one is refused, never run without it. @category Constants */
export const REFUSED_KEYS: ReadonlyArray<string> = [
  "mcpServers",
  "skills",
  "initialPrompt",
  "autoCompactWindow",
  "memory",
  "effort",
  "permissionMode",
  "hooks",
  "isolation",
  "observer",
  "observerMessage",
  "criticalSystemReminder_EXPERIMENTAL"
]

const HONOURED_KEYS = new Set(["description", "prompt", "tools", "disallowedTools", "model", "maxTurns", "omitClaudeMd", "background"])

/** Keys only a Markdown agent file has: its name, and its colour in Claude Code's interface. */
const FILE_KEYS = new Set(["name", "color"])

/** Agent definitions that cannot be used: where they came from, and each problem. @category Errors */
export class InvalidAgents extends Schema.TaggedError<InvalidAgents>("@keel/tools/InvalidAgents")("InvalidAgents", {
  /** Where the definitions came from (`--agents`, `query() option agents`, ...). */
  origin: Schema.String,
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `invalid ${this.origin}: ${this.problems.join("; ")}. Each agent is "name": {"description": "...", ` +
      `"prompt": "...", "tools": [...], "disallowedTools": [...], "model": "sonnet"|"opus"|"haiku"|"inherit"|id, "maxTurns": n}.`
  }
}

/** A definition read: the agent, and what was ignored in it (one line each). @category Models */
export interface Read {
  readonly definition: Subagents.Definition
  readonly warnings: ReadonlyArray<string>
}

/** A custom agent's system prompt as a subagent: its own prompt, then Keel's notes and the working directory. */
const subagentPrompt = (prompt: string) => (cwd: string): string =>
  [...(prompt.trim() === "" ? [] : [prompt.trim()]), Subagents.reportNote(cwd)].join("\n\n")

/** Whether a value sets something (not absent, `null`, `false`, `""` or an empty list or mapping). */
const isSet = (value: unknown): boolean =>
  value !== undefined && value !== null && value !== false && value !== "" &&
  !(Array.isArray(value) && value.length === 0) &&
  !(typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0)

/**
 * A list of tool names: a list of strings, or (`commaSeparated`, a file's frontmatter) one string of
 * comma-separated names. `*` alone means all tools (`undefined`).
 */
const toolList = (
  key: string,
  value: unknown,
  commaSeparated: boolean
): Either.Either<ReadonlyArray<string> | undefined, string> => {
  if (value === undefined || value === null) return Either.right(undefined)
  const names = typeof value === "string" && commaSeparated
    ? value.split(",")
    : Array.isArray(value) && value.every((v) => typeof v === "string")
    ? value as ReadonlyArray<string>
    : undefined
  if (names === undefined) {
    return Either.left(`${key} must be a list of tool names${commaSeparated ? " or one comma-separated line of them" : ""}`)
  }
  const trimmed = names.map((n) => n.trim()).filter((n) => n !== "")
  const patterns = trimmed.filter((n) => n.includes("("))
  if (patterns.length > 0) {
    return Either.left(
      `${key} names tool rules with patterns (${patterns.join(", ")}), which Keel does not support in an agent; ` +
        "name whole tools and put patterns in permission rules"
    )
  }
  return Either.right(trimmed.length === 1 && trimmed[0] === "*" ? undefined : trimmed)
}

/** Options of {@link read}. @category Models */
export interface ReadOptions {
  /** Frontmatter: `tools` may be a comma-separated string, `maxTurns` a number written as text, `name` and `color` are known. */
  readonly frontmatter?: boolean | undefined
}

/**
 * The agent `name` from its fields (`fields.prompt` is its prompt; a file passes its body there),
 * or the problems that stop it, each saying what is wrong with which key.
 *
 * @category Reading
 */
export const read = (
  name: string,
  fields: Readonly<Record<string, unknown>>,
  options: ReadOptions = {}
): Either.Either<Read, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const warnings: Array<string> = []
  if (name.trim() === "" || /[\s\u0000-\u001f]/.test(name)) problems.push(`the name ${JSON.stringify(name)} is empty or has spaces`)
  const text = (key: string, required: boolean): string | undefined => {
    const value = fields[key]
    if (value === undefined || value === null) {
      if (required) problems.push(`${key} is missing (a string)`)
      return undefined
    }
    if (typeof value !== "string") {
      problems.push(`${key} must be a string, got ${Array.isArray(value) ? "a list" : typeof value}`)
      return undefined
    }
    if (required && key !== "prompt" && value.trim() === "") problems.push(`${key} is empty`)
    return value
  }
  const description = text("description", true)
  const prompt = text("prompt", true)
  const model = text("model", false)?.trim()
  if (model !== undefined && (model === "" || /\s/.test(model))) problems.push(`model must be one model name, got ${JSON.stringify(model)}`)
  const tools = toolList("tools", fields.tools, options.frontmatter === true)
  const disallowed = toolList("disallowedTools", fields.disallowedTools, options.frontmatter === true)
  for (const either of [tools, disallowed]) if (Either.isLeft(either)) problems.push(either.left)
  let maxTurns: number | undefined
  const turns = options.frontmatter === true && typeof fields.maxTurns === "string" && fields.maxTurns.trim() !== ""
    ? Number(fields.maxTurns)
    : fields.maxTurns
  if (turns !== undefined && turns !== null) {
    if (typeof turns === "number" && Number.isInteger(turns) && turns > 0) maxTurns = turns
    else problems.push(`maxTurns must be a positive whole number, got ${JSON.stringify(fields.maxTurns)}`)
  }
  for (const key of ["omitClaudeMd", "background"]) {
    const value = fields[key]
    if (value !== undefined && value !== null && typeof value !== "boolean") problems.push(`${key} must be true or false`)
  }
  const refused = [
    ...REFUSED_KEYS.filter((key) => isSet(fields[key])),
    ...(fields.background === true ? ["background: true"] : [])
  ]
  if (refused.length > 0) {
    problems.push(`Keel does not support ${refused.join(", ")} in an agent (remove ${refused.length > 1 ? "them" : "it"} to run the agent without)`)
  }
  const unknown = Object.keys(fields).filter((key) =>
    !HONOURED_KEYS.has(key) && !REFUSED_KEYS.includes(key) && !(options.frontmatter === true && FILE_KEYS.has(key))
  )
  if (unknown.length > 0) warnings.push(`ignored ${unknown.map((k) => JSON.stringify(k)).join(", ")} (not an agent key Keel knows)`)
  if (problems.length > 0 || description === undefined || prompt === undefined) return Either.left(problems)
  return Either.right({
    definition: {
      agentType: name,
      whenToUse: description.trim(),
      systemPrompt: subagentPrompt(prompt),
      prompt,
      ...(Either.getOrUndefined(tools) !== undefined ? { tools: Either.getOrUndefined(tools) } : {}),
      ...(Either.getOrUndefined(disallowed) !== undefined ? { disallowedTools: Either.getOrUndefined(disallowed) } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(maxTurns !== undefined ? { maxTurns } : {})
    },
    warnings
  })
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The agents of an `agents` record (`{"name": {...}, ...}`, the Agent SDK's `Record<string,
 * AgentDefinition>`), given as JSON text (`--agents`) or as the value; `origin` names where it came
 * from in errors and warnings. Any agent's problem fails them all: nothing is half-applied.
 *
 * @category Reading
 */
export const readRecord = (
  input: unknown,
  origin: string
): Either.Either<{ readonly definitions: ReadonlyArray<Subagents.Definition>; readonly warnings: ReadonlyArray<string> }, InvalidAgents> => {
  let value: unknown = input
  if (typeof input === "string") {
    try {
      value = JSON.parse(input)
    } catch (e) {
      return Either.left(new InvalidAgents({ origin, problems: [`not JSON (${e instanceof Error ? e.message : String(e)})`] }))
    }
  }
  if (!isRecord(value)) {
    return Either.left(new InvalidAgents({ origin, problems: ["not an object of agents by name"] }))
  }
  const problems: Array<string> = []
  const warnings: Array<string> = []
  const definitions: Array<Subagents.Definition> = []
  for (const [name, fields] of Object.entries(value)) {
    if (!isRecord(fields)) {
      problems.push(`${name}: not an object with a description and a prompt`)
      continue
    }
    Either.match(read(name, fields), {
      onLeft: (ps) => problems.push(...ps.map((p) => `${name}: ${p}`)),
      onRight: (r) => {
        definitions.push(r.definition)
        warnings.push(...r.warnings.map((w) => `${origin}: agent ${name}: ${w}`))
      }
    })
  }
  return problems.length > 0 ? Either.left(new InvalidAgents({ origin, problems })) : Either.right({ definitions, warnings })
}
