/**
 * Checks `stream-json` messages against the Claude Agent SDK's own type definitions
 * (`@anthropic-ai/claude-agent-sdk`'s `sdk.d.ts`): each message is written into a generated
 * TypeScript file as `<json> satisfies <the SDK type of its variant>`, and the file is typechecked
 * with the TypeScript compiler API. A diagnostic names the message (index, `type/subtype`) and what
 * the compiler said.
 *
 * The rules:
 * - Every field the SDK declares must have its declared type, and every required field must be
 *   present. Nested objects are checked exactly (no unknown fields inside `message`, `usage`, ...).
 * - At the top level a message may carry fields the SDK does not declare (Keel's own, such as
 *   `api_retry`'s `error_message`): consumers ignore fields they do not know.
 * - Every message must carry `uuid` (UUID-shaped) and `session_id`, even the variants where the SDK
 *   makes them optional (`user`).
 * - `stream_event`'s `event` is the API's own event, relayed unchanged: only its `type` is checked.
 * - A `type/subtype` the SDK does not define is an error.
 * - A `user` message's `tool_use_result` (typed `unknown` by the SDK) is checked against the output
 *   type `sdk-tools.d.ts` declares for its call's tool (`BashOutput`, `FileReadOutput`, ...; the
 *   tool named by an earlier assistant message's `tool_use`), or a string (a failure's message).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

/** The repository root (where node_modules is). */
const root = path.resolve(import.meta.dirname, "..", "..")

/** The SDK type each `type/subtype` is checked against. */
export const sdkTypeOf: Readonly<Record<string, string>> = {
  "system/init": "SDKSystemMessage",
  "system/api_retry": "SDKAPIRetryMessage",
  "system/status": "SDKStatusMessage",
  "system/compact_boundary": "SDKCompactBoundaryMessage",
  "system/permission_denied": "SDKPermissionDeniedMessage",
  "system/local_command_output": "SDKLocalCommandOutputMessage",
  "system/informational": "SDKInformationalMessage",
  "system/notification": "SDKNotificationMessage",
  "assistant": "SDKAssistantMessage",
  "user": "SDKUserMessage",
  "stream_event": "PartialAssistant",
  "result": "SDKResultMessage",
  "tool_progress": "SDKToolProgressMessage"
}

/** The `sdk-tools.d.ts` type of each built-in tool's structured result. */
export const toolOutputOf: Readonly<Record<string, string>> = {
  Read: "FileReadOutput",
  Bash: "BashOutput",
  Edit: "FileEditOutput",
  Write: "FileWriteOutput",
  Glob: "GlobOutput",
  Grep: "GrepOutput",
  TodoWrite: "TodoWriteOutput"
}

/** `type/subtype` of a message (`type` alone for the variants without a subtype in the SDK's mapping). */
export const kindOf = (message: any): string =>
  message?.type === "system" ? `system/${String(message.subtype)}` : String(message?.type)

/** The generated source: one `satisfies` check per message. */
export const source = (messages: ReadonlyArray<unknown>) => {
  const problems: Array<string> = []
  const names = [...new Set(Object.values(sdkTypeOf).filter((n) => n.startsWith("SDK")))]
  const lines = [
    `import type { ${names.join(", ")} } from "@anthropic-ai/claude-agent-sdk"`,
    `import type { BetaRawMessageStreamEvent } from "@anthropic-ai/sdk/resources/beta/messages/messages"`,
    "type UUID = `${string}-${string}-${string}-${string}-${string}`",
    "/** Keel stamps every message; top-level fields the SDK does not declare are allowed. */",
    "type Stamped<T> = T & { uuid: UUID; session_id: string } & { readonly [extra: string]: unknown }",
    "/** The API's own event, relayed as is: only its type is Keel's business. */",
    "type PartialAssistant = Omit<import(\"@anthropic-ai/claude-agent-sdk\").SDKPartialAssistantMessage, \"event\"> & {",
    "  event: { type: BetaRawMessageStreamEvent[\"type\"] } & { readonly [extra: string]: unknown }",
    "}",
    `import type { ${[...new Set(Object.values(toolOutputOf))].join(", ")} } from "@anthropic-ai/claude-agent-sdk/sdk-tools"`
  ]
  const toolOf = new Map<string, string>()
  messages.forEach((message, i) => {
    const kind = kindOf(message)
    const typeName = sdkTypeOf[kind]
    if (typeName === undefined) {
      problems.push(`m${i} (${kind}): the Claude Agent SDK defines no message of this type`)
      return
    }
    const m = message as any
    if (kind === "assistant" && Array.isArray(m.message?.content)) {
      for (const b of m.message.content) if (b?.type === "tool_use") toolOf.set(b.id, b.name)
    }
    lines.push(`/* ${kind} */ export const m${i} = ${JSON.stringify(message, null, 1)} satisfies Stamped<${typeName}>`)
    if (kind === "user" && m.tool_use_result !== undefined && Array.isArray(m.message?.content)) {
      const id = m.message.content.find((b: any) => b?.type === "tool_result")?.tool_use_id
      const output = toolOutputOf[toolOf.get(id) ?? ""]
      if (output !== undefined) {
        lines.push(`/* ${kind} */ export const r${i} = ${JSON.stringify(m.tool_use_result, null, 1)} satisfies ${output} | string`)
      }
    }
  })
  return { text: lines.join("\n") + "\n", problems }
}

/**
 * Typechecks `messages` against the SDK's types. Returns one entry per problem (empty when every
 * message conforms): `m<i> (<type/subtype>): at <the JSON line> (line <n>): <diagnostic>`.
 */
export const check = (messages: ReadonlyArray<unknown>): Array<string> => {
  const { problems, text } = source(messages)
  const dir = path.join(root, "node_modules", ".cache", "keel-sdk-conformance")
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, `messages-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.ts`)
  fs.writeFileSync(file, text)
  try {
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: true,
      noEmit: true,
      types: []
    })
    const sourceFile = program.getSourceFile(file)
    const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.file === undefined || d.file === sourceFile)
    const fileLines = text.split("\n")
    for (const d of diagnostics) {
      const what = ts.flattenDiagnosticMessageText(d.messageText, "\n  ")
      if (d.file === undefined || d.start === undefined) {
        problems.push(`(global): ${what}`)
        continue
      }
      const { line } = d.file.getLineAndCharacterOfPosition(d.start)
      // The message a line belongs to: the nearest `export const m<i>` at or above it.
      let owner = "(preamble)"
      for (let l = line; l >= 0; l--) {
        const m = /^\/\* (\S+) \*\/ export const ([mr]\d+)/.exec(fileLines[l] ?? "")
        if (m !== null) {
          owner = `${m[2]} (${m[1]})`
          break
        }
      }
      problems.push(`${owner}: at ${(fileLines[line] ?? "").trim().slice(0, 120)} (line ${line + 1}): ${what}`)
    }
    return problems
  } finally {
    fs.rmSync(file, { force: true })
  }
}
