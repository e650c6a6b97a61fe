/**
 * Read's own limits (a file too large to read without a range, a range over the token cap, each
 * refused with the size and the range that fits), its cap's settings, and `FileLines`, which reads
 * a range of a file as a stream.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { SessionState } from "@keel/core"
import { FileLines, Read, RegularFile } from "@keel/tools"
import { ConfigProvider, Effect, Layer, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"
import { execFileSync } from "node:child_process"
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

/** Counts the fiber suspensions (waits on a callback or promise, such as a thread-pool call) of what it supervises. */
class Suspensions extends Supervisor.AbstractSupervisor<void> {
  suspends = 0
  get value() {
    return Effect.void
  }
  override onSuspend() {
    this.suspends++
  }
}

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

describe("Read of huge files and of what is not a regular file", () => {
  it.effect("limit 5 of a sparse 600 MB log: five lines at once, the count not taken", () =>
    Effect.gen(function*() {
      const file = write("huge.log", Array.from({ length: 400 }, (_, i) => `event ${i + 1} ${"x".repeat(40)}`).join("\n") + "\n")
      fs.truncateSync(file, 600_000_000)
      const started = Date.now()
      const out = ok(yield* read({ file_path: file, limit: 5 }))
      assert.isBelow(Date.now() - started, 3_000)
      assert.strictEqual(out.split("\n").filter((l) => /^\s+\d+\t/.test(l)).length, 5)
      assert.include(out, "     5\tevent 5 ")
      assert.include(out, "(Lines 1-5 of a 572.2 MB file, not counted to its end.")
      // Without a range: refused with the size and a range to read, without reading it all.
      const whole = err(yield* read({ file_path: file }))
      assert.include(whole, "600000000 bytes, about ")
      assert.include(whole, "Read it in parts with offset and limit")
      fs.rmSync(file)
    }), 30_000)

  it.effect("a small file is read without waiting on the thread pool: no fiber suspends", () =>
    Effect.gen(function*() {
      const file = write("small.txt", numbered(5, 10))
      const counter = new Suspensions()
      const out = yield* Effect.flatMap(Read.make, (tool) =>
        tool.call({ file_path: file }, { toolUseId: "t", cwd: dir }).pipe(
          Effect.supervised(counter),
          Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
        )).pipe(Effect.either, Effect.provide(session))
      assert.strictEqual(ok(out).split("\n").length, 5)
      assert.strictEqual(counter.suspends, 0)
    }))

  it.effect("a named pipe is refused at once (opening it would wait for a writer for ever)", () =>
    Effect.gen(function*() {
      const fifo = path.join(dir, `pipe-${Math.random().toString(36).slice(2)}`)
      execFileSync("mkfifo", [fifo])
      assert.strictEqual(
        err(yield* read({ file_path: fifo })),
        `${fifo} is a named pipe (FIFO), not a regular file; file tools read and write regular files only ` +
          "(reading a pipe, socket or device could wait for ever)."
      )
      assert.include(err(yield* read({ file_path: "/dev/zero" })), "/dev/zero is a character device, not a regular file")
    }))

  it.effect("a file swapped for a pipe after its stat is still not opened blocking", () =>
    Effect.gen(function*() {
      const fifo = path.join(dir, `swap-${Math.random().toString(36).slice(2)}`)
      execFileSync("mkfifo", [fifo])
      // RegularFile.open's own checks, past Read's stat: the stat refuses it, and so would the fstat.
      const refused = yield* Effect.either(Effect.scoped(RegularFile.open(fifo)))
      assert.strictEqual(refused._tag === "Left" && refused.left._tag, "NotRegularFile")
      assert.strictEqual(yield* Effect.either(RegularFile.checkTarget(fifo)).pipe(Effect.map((e) => e._tag)), "Left")
      assert.strictEqual(yield* Effect.either(RegularFile.checkTarget(path.join(dir, "new.txt"))).pipe(Effect.map((e) => e._tag)), "Right")
    }))
})

describe("FileLines", () => {
  const lines = (content: string, options: Partial<FileLines.Options> = {}) =>
    Effect.gen(function*() {
      const file = write(`lines-${Math.random().toString(36).slice(2)}.txt`, content)
      return yield* Effect.scoped(
        Effect.flatMap(RegularFile.open(file), (opened) =>
          FileLines.read(opened, file, { first: 1, count: 100, maxLineBytes: 1_000, ...options }))
      )
    })

  it.effect("splits on \\n, drops a \\r before it, counts a last line without a newline and not an empty one after it", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* lines("a\r\nb\n\nc")).lines, ["a", "b", "", "c"])
      assert.deepStrictEqual(yield* lines("a\nb\n"), { lines: ["a", "b"], cut: new Set<number>(), total: 2, complete: true, bytesRead: 4 })
      assert.strictEqual((yield* lines("")).total, 0)
    }))

  it.effect("keeps only the range, counts every line, across chunk boundaries and in multi-byte text", () =>
    Effect.gen(function*() {
      const text = Array.from({ length: 50 }, (_, i) => `é${i}→ü`).join("\n")
      const found = yield* lines(text, { first: 10, count: 3, chunkSize: 7 })
      assert.deepStrictEqual(found.lines, ["é9→ü", "é10→ü", "é11→ü"])
      assert.strictEqual(found.total, 50)
    }))

  it.effect("a CRLF and a multi-byte character split across every possible read boundary stay whole", () =>
    Effect.gen(function*() {
      const text = "añ€𝄞b\r\nx\r\n€€\r\nlast"
      for (let chunkSize = 1; chunkSize <= 12; chunkSize++) {
        const found = yield* lines(text, { chunkSize })
        assert.deepStrictEqual(found.lines, ["añ€𝄞b", "x", "€€", "last"], `chunk size ${chunkSize}`)
        assert.strictEqual(found.total, 4)
      }
      const end = yield* lines(text, { first: 3, count: 5, chunkSize: 5 })
      assert.deepStrictEqual(end.lines, ["€€", "last"])
      assert.isTrue(end.complete)
    }))

  it.effect("stops reading once the range is read and countBytes are counted: the count is then partial", () =>
    Effect.gen(function*() {
      const text = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"
      const found = yield* lines(text, { first: 3, count: 2, chunkSize: 1_000, countBytes: 2_000 })
      assert.deepStrictEqual(found.lines, ["line 3", "line 4"])
      assert.isFalse(found.complete)
      assert.strictEqual(found.bytesRead, 2_000)
      assert.isBelow(found.total, 10_000)
      const counted = yield* lines(text, { first: 3, count: 2, chunkSize: 1_000 })
      assert.deepStrictEqual([counted.total, counted.complete], [10_000, true])
      // Kept lines past maxKeptBytes: reading stops there.
      const capped = yield* lines(text, { first: 1, count: 10_000, chunkSize: 1_000, maxKeptBytes: 500, countBytes: 0 })
      assert.isBelow(capped.lines.length, 200)
      assert.isFalse(capped.complete)
    }))

  it.effect("lines 1-5 of a sparse 600 MB file are read from its first buffer, not the file", () =>
    Effect.gen(function*() {
      const file = write(`sparse-${Math.random().toString(36).slice(2)}.log`, "first\nsecond\nthird\nfourth\nfifth\nsixth\n")
      fs.truncateSync(file, 600_000_000)
      const started = Date.now()
      const found = yield* Effect.scoped(
        Effect.flatMap(RegularFile.open(file), (opened) =>
          FileLines.read(opened, file, { first: 1, count: 5, maxLineBytes: 8_000, countBytes: 1_000_000 }))
      )
      assert.deepStrictEqual(found.lines, ["first", "second", "third", "fourth", "fifth"])
      assert.isFalse(found.complete)
      assert.isAtMost(found.bytesRead, 1_048_576)
      assert.isBelow(Date.now() - started, 2_000)
      fs.rmSync(file)
    }))

  it.effect("a file that grew after it was opened is read to its end (buffers are sized by its size at open)", () =>
    Effect.gen(function*() {
      const file = write(`grows-${Math.random().toString(36).slice(2)}.txt`, "a\nb\n")
      const found = yield* Effect.scoped(Effect.gen(function*() {
        const opened = yield* RegularFile.open(file)
        fs.appendFileSync(file, "c\n".repeat(100_000))
        const head = yield* RegularFile.readHead(opened, file, 8_192)
        assert.strictEqual(head.length, 8_192)
        return yield* FileLines.read(opened, file, { first: 1, count: 3, maxLineBytes: 100 })
      }))
      assert.deepStrictEqual(found.lines, ["a", "b", "c"])
      assert.deepStrictEqual([found.total, found.complete, found.bytesRead], [100_002, true, 200_004])
    }))

  it.effect("reads past the first SYNC_READ_BYTES go through the thread pool; the count is the same", () =>
    Effect.gen(function*() {
      const n = 400_000
      const text = Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n"
      assert.isAbove(text.length, 2 * RegularFile.SYNC_READ_BYTES)
      const counter = new Suspensions()
      const found = yield* lines(text, { first: n - 1, count: 5 }).pipe(
        Effect.supervised(counter),
        Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
      )
      assert.deepStrictEqual(found.lines, [`line ${n - 1}`, `line ${n}`])
      assert.deepStrictEqual([found.total, found.complete, found.bytesRead], [n, true, text.length])
      // 256 KiB chunks: the first 4 synchronous, the others (and the last, empty one) awaited.
      assert.strictEqual(counter.suspends, Math.ceil(text.length / 262_144) - 4 + 1)
    }))

  it.effect("cuts a line at maxLineBytes and says so", () =>
    Effect.gen(function*() {
      const found = yield* lines(`short\n${"y".repeat(5_000)}\nend`, { maxLineBytes: 100, chunkSize: 64 })
      assert.deepStrictEqual(found.lines.map((l) => l.length), [5, 100, 3])
      assert.deepStrictEqual([...found.cut], [1])
    }))
})
