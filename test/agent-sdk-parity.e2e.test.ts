/**
 * End to end, side by side: each case runs the real Claude Agent SDK's `query()` on `keel` and on
 * Claude Code's own binary (the SDK's optional dependency; skipped, saying why, where it is not
 * installed), against the same scripted fake Messages API, and asserts the same outcome of both.
 * What the host sees (messages, results, its callbacks called) and what reaches the model (the
 * requests) must agree; the CLIs' own prompts and tool sets differ and are not compared.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { clis, resultOf, run, start, systemText } from "./support/AgentSdk.js"
import { Message } from "@keel/core"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, fake, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 90_000

for (const cli of clis) {
  describe.skipIf(cli.unavailable !== undefined)(`the Agent SDK's query() on ${cli.name}`, () => {
    it("a plain prompt: system/init first, the answer, one success result", async () => {
      const server = await fake([FakeAnthropic.textReply("hello from the model")])
      const { error, messages } = await run(cli, workdir(), server)
      assert.isUndefined(error)
      assert.strictEqual(messages[0].type, "system")
      assert.strictEqual(messages[0].subtype, "init")
      const result = resultOf(messages)
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.result, "hello from the model")
      assert.strictEqual(result.num_turns, 1)
      assert.strictEqual(server.requests.length, 1)
    }, TIMEOUT)

    it("an answer of text then two tool calls: one assistant message per block, all with the answer's id", async () => {
      const dir = workdir()
      const server = await fake([
        FakeAnthropic.toolUseReply([
          new Message.TextBlock({ text: "Reading two files." }),
          { name: "Read", input: { file_path: path.join(dir, "README.md") }, id: "toolu_one" },
          { name: "Read", input: { file_path: path.join(dir, "README.md") }, id: "toolu_two" }
        ], { id: "msg_blocks" }),
        FakeAnthropic.textReply("Both read.", { id: "msg_done" })
      ])
      const { error, messages } = await run(cli, dir, server, { allowedTools: ["Read"] })
      assert.isUndefined(error)
      const answers = messages.filter((m) => m.type === "assistant")
      assert.deepStrictEqual(
        answers.map((m) => [m.message.id, m.message.content.map((b: any) => b.type === "tool_use" ? b.id : b.type)]),
        [["msg_blocks", ["text"]], ["msg_blocks", ["toolu_one"]], ["msg_blocks", ["toolu_two"]], ["msg_done", ["text"]]]
      )
      assert.strictEqual(new Set(answers.map((m) => m.uuid)).size, 4)
      // The model got the whole answer back, both calls answered.
      assert.deepStrictEqual(server.requests[1]!.body.messages[1].content.map((b: any) => b.type), ["text", "tool_use", "tool_use"])
      assert.strictEqual(resultOf(messages).result, "Both read.")
    }, TIMEOUT)

    it("canUseTool: allow runs the call, deny's message reaches the model and the denial is in the result", async () => {
      const dir = workdir()
      const server = await fake([
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo yes > allowed.txt" }, id: "toolu_a" }]),
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo no > denied.txt" }, id: "toolu_d" }]),
        FakeAnthropic.textReply("done")
      ])
      const asked: Array<string> = []
      const { error, messages } = await run(cli, dir, server, {
        canUseTool: async (toolName, input) => {
          asked.push(`${toolName}: ${(input as { command: string }).command}`)
          return asked.length === 1
            ? { behavior: "allow", updatedInput: input }
            : { behavior: "deny", message: "not this one, says the host" }
        }
      })
      assert.isUndefined(error)
      assert.deepStrictEqual(asked, ["Bash: echo yes > allowed.txt", "Bash: echo no > denied.txt"])
      assert.strictEqual(fs.readFileSync(path.join(dir, "allowed.txt"), "utf8"), "yes\n")
      assert.isFalse(fs.existsSync(path.join(dir, "denied.txt")))
      const denied = server.requests[2]!.body.messages.at(-1).content.find((b: any) => b.tool_use_id === "toolu_d")
      assert.include(JSON.stringify(denied.content), "not this one, says the host")
      assert.isTrue(denied.is_error)
      assert.deepStrictEqual(resultOf(messages).permission_denials.map((d: any) => d.tool_use_id), ["toolu_d"])
      assert.strictEqual(resultOf(messages).result, "done")
    }, TIMEOUT)

    it("canUseTool's updatedPermissions: the suggested rule is kept, in the local settings, and the same command is not asked again", async () => {
      const dir = workdir()
      const server = await fake([
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch made.txt" }, id: "toolu_1" }]),
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch made.txt" }, id: "toolu_2" }]),
        FakeAnthropic.textReply("done")
      ])
      const suggested: Array<unknown> = []
      const { error, messages } = await run(cli, dir, server, {
        canUseTool: async (_name, input, { suggestions }) => {
          suggested.push(suggestions)
          return { behavior: "allow", updatedInput: input, updatedPermissions: suggestions ?? [] }
        }
      })
      assert.isUndefined(error)
      assert.strictEqual(resultOf(messages).result, "done")
      assert.strictEqual(suggested.length, 1, "asked once: the answer's rule allowed the second call")
      const rule = (suggested[0] as Array<any>)[0]
      assert.deepInclude(rule, { type: "addRules", behavior: "allow", destination: "localSettings" })
      // Each CLI writes its own project-local settings file.
      const file = path.join(dir, cli.name === "keel" ? ".keel" : ".claude", "settings.local.json")
      const saved = JSON.parse(fs.readFileSync(file, "utf8"))
      assert.lengthOf(saved.permissions.allow, 1)
      assert.match(saved.permissions.allow[0], /^Bash\(touch made.txt/)
    }, TIMEOUT)

    it("a PreToolUse callback hook that denies blocks the Bash call; its reason reaches the model", async () => {
      const dir = workdir()
      const server = await fake([
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch hooked.txt" }, id: "toolu_h" }]),
        FakeAnthropic.textReply("understood")
      ])
      const seen: Array<unknown> = []
      const { error, messages } = await run(cli, dir, server, {
        canUseTool: async (_name, input) => ({ behavior: "allow", updatedInput: input }),
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [async (input) => {
              seen.push((input as { tool_input: unknown }).tool_input)
              return {
                hookSpecificOutput: {
                  hookEventName: "PreToolUse",
                  permissionDecision: "deny",
                  permissionDecisionReason: "no shell in this host"
                }
              }
            }]
          }]
        }
      })
      assert.isUndefined(error)
      assert.deepStrictEqual(seen, [{ command: "touch hooked.txt" }])
      assert.isFalse(fs.existsSync(path.join(dir, "hooked.txt")))
      const result = server.requests[1]!.body.messages.at(-1).content.find((b: any) => b.tool_use_id === "toolu_h")
      assert.isTrue(result.is_error)
      assert.include(JSON.stringify(result.content), "no shell in this host")
      assert.strictEqual(resultOf(messages).result, "understood")
    }, TIMEOUT)

    it("systemPrompt as a string replaces the CLI's own prompt", async () => {
      const server = await fake([FakeAnthropic.textReply("ok")])
      const { error } = await run(cli, workdir(), server, { systemPrompt: "You are terse. Answer in one word." })
      assert.isUndefined(error)
      const system = systemText(server.requests[0]!.body)
      assert.isTrue(system.endsWith("You are terse. Answer in one word."), system.slice(-200))
      assert.isBelow(system.length, 1000, "the CLI's default prompt is not sent")
    }, TIMEOUT)

    it("systemPrompt preset with append: the CLI's own prompt, then the appended text last", async () => {
      const server = await fake([FakeAnthropic.textReply("ok")])
      const { error } = await run(cli, workdir(), server, {
        systemPrompt: { type: "preset", preset: "claude_code", append: "Always end with APPENDED-LINE." }
      })
      assert.isUndefined(error)
      const system = systemText(server.requests[0]!.body)
      assert.isTrue(system.trimEnd().endsWith("Always end with APPENDED-LINE."), system.slice(-200))
      assert.isAbove(system.length, 1000, "the CLI's default prompt is kept")
    }, TIMEOUT)

    it("maxTurns: 1 stops after the first model call with error_max_turns", async () => {
      const server = await fake([
        FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo one" }, id: "toolu_1" }]),
        FakeAnthropic.textReply("never asked for")
      ])
      const { error, messages } = await run(cli, workdir(), server, {
        maxTurns: 1,
        canUseTool: async (_name, input) => ({ behavior: "allow", updatedInput: input })
      })
      const result = resultOf(messages)
      assert.strictEqual(result?.subtype, "error_max_turns", error?.message)
      assert.isTrue(result.is_error)
      assert.strictEqual(server.requests.length, 1)
    }, TIMEOUT)

    it("interrupt() mid-stream stops the turn with an error result; the stalled request is the only one", async () => {
      const server = await fake([{ ...FakeAnthropic.textReply("never finishes"), stallAfter: 3 }])
      async function* input() {
        yield { type: "user" as const, message: { role: "user" as const, content: "long one" }, parent_tool_use_id: null }
        await new Promise((resolve) => setTimeout(resolve, 60_000))
      }
      const q = start(cli, workdir(), server, input())
      let result: any
      for await (const message of q) {
        if (message.type === "system" && message.subtype === "init") {
          while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
          await q.interrupt()
        }
        if (message.type === "result") {
          result = message
          break
        }
      }
      q.close()
      assert.strictEqual(result.subtype, "error_during_execution")
      assert.isTrue(result.is_error)
      assert.strictEqual(server.requests.length, 1)
    }, TIMEOUT)

    it("streaming input with setModel between turns: the next request uses the new model", async () => {
      // Answered by the prompt: Claude Code checks a new model with a request of its own (not streamed).
      const server = await fake([], {
        fallback: (body) => {
          const last = body.messages.at(-1).content
          const text = typeof last === "string" ? last : JSON.stringify(last)
          return FakeAnthropic.textReply(text.includes("two") ? "second" : text.includes("one") ? "first" : "ok")
        }
      })
      let release: () => void = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      async function* input() {
        yield { type: "user" as const, message: { role: "user" as const, content: "one" }, parent_tool_use_id: null }
        await gate
        yield { type: "user" as const, message: { role: "user" as const, content: "two" }, parent_tool_use_id: null }
      }
      const q = start(cli, workdir(), server, input())
      const results: Array<any> = []
      for await (const message of q) {
        if (message.type !== "result") continue
        results.push(message)
        if (results.length === 1) {
          await q.setModel("claude-haiku-4-5")
          release()
        }
        if (results.length === 2) break
      }
      q.close()
      assert.deepStrictEqual(results.map((r) => r.result), ["first", "second"])
      const turns = server.requests.filter((r) => r.body.stream === true)
      assert.deepStrictEqual(turns.map((r) => r.body.model), ["claude-sonnet-4-6", "claude-haiku-4-5"])
    }, TIMEOUT)
  })
}
