/**
 * Read's own limits (a file too large to read without a range, a range over the token cap, each
 * refused with the size and the range that fits), its cap's settings, and `FileLines`, which reads
 * a range of a file as a stream.
 */
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import { assert, describe, it } from "@effect/vitest"
import { SessionState } from "@keel/core"
import { FileLines, Read } from "@keel/tools"
import { ConfigProvider, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-read-limits-"))
const write = (name: string, content: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, content)
  return file
}

const session = Layer.merge(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")))

const read = (input: { file_path: string; offset?: number; limit?: number }, options: Read.Options = {}) =>
  Effect.flatMap(Read.makeWith(options), (tool) => tool.call(input, { toolUseId: "t", cwd: dir })).pipe(
    Effect.either,
    Effect.provide(session)
  )

/** `n` lines `line <i> ` followed by `width` x's. */
const numbered = (n: number, width: number) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1} ${"x".repeat(width)}`).join("\n") + "\n"

describe("Read's limits", () => {
  it.effect("a 60 KB file comes back whole: every line, no note (it is under the token cap)", () =>
    Effect.gen(function*() {
      const file = write("sixty.txt", numbered(1_500, 30)) // ~61 KB
      const out = ok(yield* read({ file_path: file }))
      const lines = out.split("\n")
      assert.strictEqual(lines.length, 1_500)
      assert.strictEqual(lines[1_499], `  1500\tline 1500 ${"x".repeat(30)}`)
    }))

  it.effect("a file over 256 KB without a range is refused at once with its size, the cap and a first range that fits", () =>
    Effect.gen(function*() {
      const file = write("five-mb.txt", numbered(100_000, 40)) // ~5.3 MB
      const bytes = fs.statSync(file).size
      const message = err(yield* read({ file_path: file }))
      assert.strictEqual(
        message,
        `${file} is too large to read at once: ${bytes} bytes, 100000 lines, about ${Math.ceil(bytes / 4)} tokens; ` +
          `Read reads at most 262144 bytes without a range and returns at most 25000 tokens. ` +
          "Read it in parts with offset and limit: read lines 1-1500 first (offset 1, limit 1500), then continue from " +
          "offset 1501. To find something in it, search it with Grep instead."
      )
      // The range it names is read.
      const out = ok(yield* read({ file_path: file, offset: 1, limit: 1_500 }))
      assert.isTrue(out.endsWith("(Lines 1-1500 of 100000. Use offset and limit to read other parts.)"))
      // A range deep in the file: the lines asked for, numbered from the offset.
      const deep = ok(yield* read({ file_path: file, offset: 99_999, limit: 5 })).split("\n")
      assert.deepStrictEqual(deep.slice(0, 2), [` 99999\tline 99999 ${"x".repeat(40)}`, `100000\tline 100000 ${"x".repeat(40)}`])
      assert.strictEqual(deep[3], "(Lines 99999-100000 of 100000. Use offset and limit to read other parts.)")
    }))

  it.effect("a range over the token cap is refused with the exact range from the same offset that fits", () =>
    Effect.gen(function*() {
      const file = write("wide.txt", numbered(400, 90)) // ~100 characters a numbered line
      const message = err(yield* read({ file_path: file, offset: 11, limit: 300 }, { maxOutputTokens: 2_000 }))
      const match = /Read lines 11-(\d+) first \(offset 11, limit (\d+)\), then continue from offset (\d+)\./.exec(message)
      assert.isNotNull(match, message)
      assert.include(message, `Lines 11-310 of ${file} are about `)
      assert.include(message, "more than the 2000 tokens one Read returns (the file has 400 lines)")
      const limit = Number(match![2])
      assert.strictEqual(Number(match![1]), 10 + limit)
      assert.strictEqual(Number(match![3]), 11 + limit)
      // The range named fits, and one line more would not.
      const fits = ok(yield* read({ file_path: file, offset: 11, limit }, { maxOutputTokens: 2_000 }))
      const body = fits.slice(0, fits.indexOf("\n\n(Lines"))
      assert.isAtMost(Math.ceil(body.length / 4), 2_000)
      assert.isTrue((yield* read({ file_path: file, offset: 11, limit: limit + 1 }, { maxOutputTokens: 2_000 }))._tag === "Left")
    }))

  it.effect("the cap is in the tool's description", () =>
    Effect.gen(function*() {
      const tool = yield* Read.makeWith({ maxOutputTokens: 1_234 }).pipe(Effect.provide(NodeContext.layer))
      assert.include(tool.description, "at most about 1,234 tokens")
      assert.strictEqual(tool.maxResultChars, Infinity)
    }))

  it.effect("the cap comes from KEEL_FILE_READ_MAX_OUTPUT_TOKENS, else CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS, else 25,000", () =>
    Effect.gen(function*() {
      const load = (env: Record<string, string>) =>
        Effect.withConfigProvider(Read.maxOutputTokensConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))
      assert.strictEqual(yield* load({}), 25_000)
      assert.strictEqual(yield* load({ CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS: "9000" }), 9_000)
      assert.strictEqual(
        yield* load({ KEEL_FILE_READ_MAX_OUTPUT_TOKENS: "7000", CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS: "9000" }),
        7_000
      )
      assert.isTrue((yield* Effect.either(load({ KEEL_FILE_READ_MAX_OUTPUT_TOKENS: "0" })))._tag === "Left")
    }))
})

describe("FileLines", () => {
  const lines = (content: string, options: Partial<FileLines.Options> = {}) =>
    Effect.gen(function*() {
      const file = write(`lines-${Math.random().toString(36).slice(2)}.txt`, content)
      const fsys = yield* FileSystem.FileSystem
      return yield* FileLines.read(fsys, file, { first: 1, count: 100, maxLineBytes: 1_000, ...options })
    }).pipe(Effect.provide(NodeContext.layer))

  it.effect("splits on \\n, drops a \\r before it, counts a last line without a newline and not an empty one after it", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* lines("a\r\nb\n\nc")).lines, ["a", "b", "", "c"])
      assert.deepStrictEqual(yield* lines("a\nb\n"), { lines: ["a", "b"], cut: new Set<number>(), total: 2 })
      assert.strictEqual((yield* lines("")).total, 0)
    }))

  it.effect("keeps only the range, counts every line, across chunk boundaries and in multi-byte text", () =>
    Effect.gen(function*() {
      const text = Array.from({ length: 50 }, (_, i) => `é${i}→ü`).join("\n")
      const found = yield* lines(text, { first: 10, count: 3, chunkSize: 7 })
      assert.deepStrictEqual(found.lines, ["é9→ü", "é10→ü", "é11→ü"])
      assert.strictEqual(found.total, 50)
    }))

  it.effect("cuts a line at maxLineBytes and says so", () =>
    Effect.gen(function*() {
      const found = yield* lines(`short\n${"y".repeat(5_000)}\nend`, { maxLineBytes: 100, chunkSize: 64 })
      assert.deepStrictEqual(found.lines.map((l) => l.length), [5, 100, 3])
      assert.deepStrictEqual([...found.cut], [1])
    }))
})
