/**
 * Compile-time checks that `query()` stays a drop-in for the Claude Agent SDK's (the pinned dev
 * dependency's `sdk.d.ts`): where Keel's `Options` overlap the SDK's they are assignable both ways,
 * an SDK-typed `canUseTool` and streaming input plug in unchanged, and the messages Keel yields
 * read as the SDK's message types for the common variants. These are checked by `tsc` (`npm run
 * typecheck` includes test/); the runtime tests only make sure the file runs.
 */
import type * as Sdk from "@anthropic-ai/claude-agent-sdk"
import { type Query, query } from "@keel/cli"
import { describe, expectTypeOf, it } from "vitest"

/** Every field readonly, all the way down: what a consumer that only reads a message needs. */
type Reading<T> = T extends (...args: never) => unknown ? T
  : T extends ReadonlyArray<infer E> ? ReadonlyArray<Reading<E>>
  : T extends object ? { readonly [K in keyof T]: Reading<T[K]> }
  : T

/** The Options keys Keel supports (all of `Query.Options`'s). */
type Supported = keyof Query.Options

/**
 * Options whose SDK type is wider than Keel's, on purpose (rejected at run time too):
 * `permissionMode` without `auto`, `systemPrompt` without `string[]` and `custom`, `mcpServers`
 * without in-process `sdk` servers.
 */
type Narrowed = "permissionMode" | "systemPrompt" | "mcpServers"

describe("query() types against the Agent SDK's", () => {
  it("Options: every key Keel has is an SDK key; Keel's options are valid SDK options", () => {
    expectTypeOf<Supported>().toExtend<keyof Sdk.Options>()
    expectTypeOf<Query.Options>().toExtend<Sdk.Options>()
  })

  it("Options: SDK options restricted to Keel's keys are Keel options (but for the narrowed ones)", () => {
    expectTypeOf<Omit<Pick<Sdk.Options, Supported>, Narrowed>>().toExtend<Omit<Query.Options, Narrowed>>()
    // The narrowed ones: Keel's values are SDK values.
    expectTypeOf<Query.PermissionMode>().toExtend<Sdk.PermissionMode>()
    expectTypeOf<Exclude<Sdk.PermissionMode, "auto">>().toExtend<Query.PermissionMode>()
    expectTypeOf<NonNullable<Query.Options["systemPrompt"]>>().toExtend<NonNullable<Sdk.Options["systemPrompt"]>>()
    expectTypeOf<Sdk.McpStdioServerConfig>().toExtend<Query.McpServerConfig>()
    expectTypeOf<Sdk.McpHttpServerConfig>().toExtend<Query.McpServerConfig>()
    expectTypeOf<Sdk.McpSSEServerConfig>().toExtend<Query.McpServerConfig>()
    expectTypeOf<Query.McpServerConfig>().toExtend<Sdk.McpServerConfig>()
  })

  it("canUseTool: an SDK-typed callback is a Keel callback, and the other way round", () => {
    expectTypeOf<Sdk.CanUseTool>().toExtend<Query.CanUseTool>()
    expectTypeOf<Query.CanUseTool>().toExtend<Sdk.CanUseTool>()
    expectTypeOf<Sdk.PermissionResult>().toExtend<Query.PermissionResult>()
  })

  it("query(): SDK-shaped calls compile unchanged", () => {
    const sdkOptions = {
      cwd: "/tmp",
      model: "claude-sonnet-4-6",
      allowedTools: ["Read", "Bash(git status:*)"],
      permissionMode: "acceptEdits",
      systemPrompt: { type: "preset", preset: "claude_code", append: "Be brief." },
      mcpServers: { files: { command: "npx", args: ["server"] }, remote: { type: "http", url: "http://localhost:1" } },
      canUseTool: async (_toolName, input) => ({ behavior: "allow", updatedInput: input }),
      abortController: new AbortController(),
      env: { ...process.env, ANTHROPIC_MODEL: "claude-haiku-4-5" }
    } satisfies Sdk.Options
    expectTypeOf(sdkOptions).toExtend<Query.Options>()
    async function* input(): AsyncGenerator<Sdk.SDKUserMessage> {
      yield { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null }
    }
    expectTypeOf(query).toBeCallableWith({ prompt: input(), options: sdkOptions })
    expectTypeOf(query).toBeCallableWith({ prompt: "hi" })
  })

  it("Query: an AsyncGenerator with interrupt() (with the receipt), setModel() and close() of the SDK's signatures", () => {
    expectTypeOf<Query.Query>().toExtend<AsyncGenerator<Query.SDKMessage, void>>()
    expectTypeOf<Query.Query>().toExtend<Pick<Sdk.Query, "interrupt" | "setModel" | "close">>()
    expectTypeOf<Query.Query["interrupt"]>().parameters.toEqualTypeOf<Parameters<Sdk.Query["interrupt"]>>()
    expectTypeOf<Query.SDKControlInterruptResponse>().toExtend<Sdk.SDKControlInterruptResponse>()
  })

  it("streaming input: the SDK's user messages, priority and uuid included, are Keel's", () => {
    expectTypeOf<Sdk.SDKUserMessage>().toExtend<Query.SDKUserMessage>()
    expectTypeOf<NonNullable<Sdk.SDKUserMessage["priority"]>>().toEqualTypeOf<NonNullable<Query.SDKUserMessage["priority"]>>()
  })

  it("messages: the common variants read as the SDK's", () => {
    type Keel = Query.SDKMessage
    type Of<T extends Keel["type"], S = never> = [S] extends [never] ? Extract<Keel, { type: T }>
      : Extract<Keel, { type: T; subtype: S }>
    // `uuid` is a string (the SDK's is a UUID template type), so it is compared on its own below.
    type Common<T> = Reading<Omit<T, "uuid">>

    expectTypeOf<Keel["type"]>().toExtend<Sdk.SDKMessage["type"]>()
    expectTypeOf<Of<"system", "init">["capabilities"]>().toExtend<Reading<NonNullable<Sdk.SDKSystemMessage["capabilities"]>>>()
    expectTypeOf<Keel["uuid"]>().toBeString()
    expectTypeOf<Keel["session_id"]>().toExtend<Sdk.SDKMessage["session_id"]>()

    expectTypeOf<Of<"system", "init">>().toExtend<
      Common<
        Pick<
          Sdk.SDKSystemMessage,
          | "type"
          | "subtype"
          | "cwd"
          | "session_id"
          | "tools"
          | "mcp_servers"
          | "model"
          | "slash_commands"
          | "claude_code_version"
          | "output_style"
          | "skills"
          | "plugins"
        >
      >
    >()
    expectTypeOf<Of<"assistant">>().toExtend<Common<Pick<Sdk.SDKAssistantMessage, "type" | "parent_tool_use_id" | "session_id">>>()
    expectTypeOf<Of<"assistant">["message"]>().toExtend<
      Reading<Pick<Sdk.SDKAssistantMessage["message"], "id" | "type" | "role" | "model" | "stop_sequence">>
    >()
    expectTypeOf<Of<"user">>().toExtend<
      Common<Pick<Sdk.SDKUserMessage, "type" | "message" | "parent_tool_use_id" | "isSynthetic" | "session_id">>
    >()
    expectTypeOf<Of<"stream_event">>().toExtend<Common<Pick<Sdk.SDKPartialAssistantMessage, "type" | "parent_tool_use_id" | "session_id">>>()
    expectTypeOf<Of<"result">>().toExtend<
      Common<
        Pick<
          Sdk.SDKResultMessage,
          | "type"
          | "duration_ms"
          | "duration_api_ms"
          | "is_error"
          | "num_turns"
          | "stop_reason"
          | "total_cost_usd"
          | "session_id"
        >
      >
    >()
    expectTypeOf<Of<"result">["subtype"]>().toExtend<Sdk.SDKResultMessage["subtype"]>()
    expectTypeOf<Of<"result">["usage"]>().toExtend<Reading<Pick<Sdk.SDKResultMessage["usage"], "input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens">>>()
    expectTypeOf<Of<"result">["modelUsage"][string]>().toExtend<Reading<Omit<Sdk.ModelUsage, "thinkingTokens" | "canonicalModel" | "provider" | "costBasis">>>()
    // `tool_input` is `unknown` in Keel (the SDK says `Record<string, unknown>`): compared without it.
    expectTypeOf<Of<"result">["permission_denials"][number]>().toExtend<Reading<Omit<Sdk.SDKPermissionDenial, "tool_input">>>()
    expectTypeOf<Of<"system", "compact_boundary">>().toExtend<Common<Pick<Sdk.SDKCompactBoundaryMessage, "type" | "subtype" | "compact_metadata" | "session_id">>>()
    expectTypeOf<Of<"system", "status">>().toExtend<
      Common<Pick<Sdk.SDKStatusMessage, "type" | "subtype" | "status" | "compact_result" | "compact_error" | "session_id">>
    >()
    expectTypeOf<Of<"tool_progress">>().toExtend<
      Common<Pick<Sdk.SDKToolProgressMessage, "type" | "tool_use_id" | "tool_name" | "parent_tool_use_id" | "elapsed_time_seconds" | "session_id">>
    >()
  })
})
