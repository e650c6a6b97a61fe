/**
 * MCP tools as Keel tools, against real servers: server-everything (text, images, the server's own
 * input validation), server-filesystem in a temp folder (read-only and writing tools), and the test
 * server (error results, structured content, the output cap, the call timeout under TestClock,
 * cancellation on interruption).
 */
import { assert, describe, it } from "@effect/vitest"
import { Message, Tool } from "@keel/core"
import { McpResult, McpServers } from "@keel/tools"
import { McpTool } from "@keel/tools/mcp"
import { Effect, Fiber, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { eventually, everything, filesystem, stdio, tempDir, structuredToolOf, testServer, toolOf } from "./support/Mcp.js"
import { callServices } from "./support/Calls.js"

const context = (cwd: string) => ({ toolUseId: "toolu_1", cwd })

describe("McpTool", () => {
  it("names: mcp__<server>__<tool>, characters the API refuses become _", () => {
    assert.strictEqual(McpTool.toolName("everything", "get-sum"), "mcp__everything__get-sum")
    assert.strictEqual(McpTool.toolName("my server.io", "weird.name/v2"), "mcp__my_server_io__weird_name_v2")
  })

  it.live("server-everything: text, an image as an image block, and the server's own input validation", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([stdio("everything", everything, ["stdio"])], { cwd: dir })
      assert.strictEqual(yield* toolOf(service, "mcp__everything__echo").call({ message: "hi" }, context(dir)), "Echo: hi")
      const sum = toolOf(service, "mcp__everything__get-sum")
      assert.strictEqual(yield* sum.call({ a: 2, b: 40 }, context(dir)), "The sum of 2 and 40 is 42.")
      assert.isTrue(sum.isReadOnly({}), "readOnlyHint: true")
      const invalid = yield* sum.call({ a: "two" }, context(dir)).pipe(Effect.flip)
      assert.include(invalid.message, "Input validation error")
      const image = yield* toolOf(service, "mcp__everything__get-tiny-image").call({}, context(dir))
      assert.isArray(image)
      const blocks = image as ReadonlyArray<Message.TextBlock | Message.ImageBlock>
      assert.deepStrictEqual(blocks.map((b) => b.type), ["text", "image", "text"])
      const img = blocks[1] as Message.ImageBlock
      assert.strictEqual(img.source.type, "base64")
      assert.strictEqual((img.source as { media_type: string }).media_type, "image/png")
      assert.isTrue((img.source as { data: string }).data.startsWith("iVBORw0KGgo"))
      const links = yield* toolOf(service, "mcp__everything__get-resource-links").call({ count: 2 }, context(dir))
      assert.include(links as string, "[Resource link: Blob Resource 1] demo://resource/dynamic/blob/1")
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.live("server-filesystem in a temp folder: reading tools are read-only, writing ones are not, and both work", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.writeFileSync(path.join(dir, "notes.txt"), "first line\nsecond line\n")
      const service = yield* McpServers.make([stdio("fs", filesystem, [dir])], { cwd: dir })
      const read = toolOf(service, "mcp__fs__read_text_file")
      const write = toolOf(service, "mcp__fs__write_file")
      assert.isTrue(read.isReadOnly({}))
      assert.isFalse(write.isReadOnly({}))
      assert.isFalse(write.isConcurrencySafe({}))
      // After a crash, a cut call runs again only when the server says a repeat changes nothing more.
      assert.isTrue(read.isIdempotent?.({}))
      assert.isTrue(write.isIdempotent?.({}), "write_file is marked idempotentHint")
      assert.isFalse(toolOf(service, "mcp__fs__edit_file").isIdempotent?.({}), "edit_file is not")
      assert.strictEqual(yield* read.call({ path: path.join(dir, "notes.txt") }, context(dir)), "first line\nsecond line\n")
      assert.strictEqual(
        yield* write.call({ path: path.join(dir, "new.txt"), content: "made by MCP" }, context(dir)),
        `Successfully wrote to ${path.join(dir, "new.txt")}`
      )
      assert.strictEqual(fs.readFileSync(path.join(dir, "new.txt"), "utf8"), "made by MCP")
      const outside = yield* read.call({ path: "/etc/hostname" }, context(dir)).pipe(Effect.flip)
      assert.include(outside.message, "Access denied - path outside allowed directories")
      const listing = yield* toolOf(service, "mcp__fs__list_directory").call({ path: dir }, context(dir))
      assert.include(listing as string, "[FILE] notes.txt")
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.live("error results fail with their text; structured content becomes JSON; a normalised name calls the real one", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([stdio("t", testServer)], { cwd: dir })
      assert.strictEqual((yield* toolOf(service, "mcp__t__fail").call({}, context(dir)).pipe(Effect.flip)).message, "the widget is broken")
      assert.strictEqual(yield* toolOf(service, "mcp__t__structured").call({}, context(dir)), "{\"answer\":42}")
      // The structured results, as Claude Code gives them for MCP tools.
      assert.deepStrictEqual(Tool.structuredOf(yield* structuredToolOf(service, "mcp__t__structured").call({}, context(dir))), {
        content: "{\"answer\":42}",
        structuredContent: { answer: 42 }
      })
      assert.deepStrictEqual(Tool.structuredOf(yield* structuredToolOf(service, "mcp__t__echo").call({ text: "hi" }, context(dir))), [
        { type: "text", text: "hi" }
      ])
      assert.strictEqual(yield* toolOf(service, "mcp__t__weird_name_v2").call({}, context(dir)), "weird ok")
      assert.isFalse(toolOf(service, "mcp__t__write").isReadOnly({}), "no readOnlyHint: asks for permission")
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.live("output is capped at MAX_MCP_OUTPUT_TOKENS (default 25,000 tokens, 100,000 characters), with a note", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([stdio("t", testServer)], { cwd: dir })
      const big = toolOf(service, "mcp__t__big")
      assert.strictEqual(yield* big.call({ chars: 100_000 }, context(dir)), "x".repeat(100_000))
      const cut = (yield* big.call({ chars: 150_000 }, context(dir))) as string
      assert.strictEqual(cut, "x".repeat(100_000) + "\n\n" + McpResult.truncationNote(25_000))
      const small = yield* McpServers.make([stdio("t", testServer)], { cwd: dir, maxOutputTokens: 10 })
      assert.strictEqual(
        yield* toolOf(small, "mcp__t__big").call({ chars: 1000 }, context(dir)),
        "x".repeat(40) + "\n\n" + McpResult.truncationNote(10)
      )
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it("the cap counts an image as 1,600 tokens and drops images past it", () => {
    const image = new Message.ImageBlock({ source: { type: "base64", media_type: "image/png", data: "AAAA" } })
    const text = new Message.TextBlock({ text: "y".repeat(100) })
    assert.deepStrictEqual(McpResult.cap([image, text], 1_625).kept.map((b) => b.type), ["image", "text"])
    const { kept, truncated } = McpResult.cap([text, image], 1_000)
    assert.isTrue(truncated)
    assert.deepStrictEqual(kept.map((b) => b.type), ["text"])
  })

  it.scoped("a call that takes longer than the timeout fails (under TestClock) and is cancelled on the server", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const cancelFile = path.join(dir, "cancelled")
      const service = yield* McpServers.make([stdio("t", testServer, [], { MCP_TEST_CANCEL_FILE: cancelFile }, { timeout: 5_000 })], {
        cwd: dir,
        timeout: "1 hour"
      })
      const call = yield* Effect.fork(toolOf(service, "mcp__t__hang").call({}, context(dir)).pipe(Effect.flip))
      yield* eventually(() => fs.existsSync(cancelFile), "the call to reach the server")
      yield* TestClock.adjust("4 seconds")
      assert.isNull(call.unsafePoll(), "still waiting")
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(call)
      assert.instanceOf(error, Tool.ToolError)
      assert.strictEqual(
        error.message,
        "MCP server t: hang did not answer within 5s, and was cancelled (MCP_TOOL_TIMEOUT, or the server's \"timeout\", sets the limit)"
      )
      yield* eventually(() => fs.readFileSync(cancelFile, "utf8").includes("cancelled"), "the server to see the cancellation")
      assert.match(fs.readFileSync(cancelFile, "utf8"), /^started (\d+)\ncancelled \1\n$/)
    }).pipe(Effect.provide(callServices())))

  it.live("interrupting a call cancels it on the server; the server keeps serving", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const cancelFile = path.join(dir, "cancelled")
      const service = yield* McpServers.make([stdio("t", testServer, [], { MCP_TEST_CANCEL_FILE: cancelFile })], { cwd: dir })
      const call = yield* Effect.fork(toolOf(service, "mcp__t__hang").call({}, context(dir)))
      yield* eventually(() => fs.existsSync(cancelFile), "the call to reach the server")
      yield* Fiber.interrupt(call)
      yield* eventually(() => fs.readFileSync(cancelFile, "utf8").includes("cancelled"), "the server to see the cancellation")
      assert.strictEqual(yield* toolOf(service, "mcp__t__echo").call({ text: "after" }, context(dir)), "after")
    }).pipe(Effect.scoped, Effect.provide(callServices())))
})
