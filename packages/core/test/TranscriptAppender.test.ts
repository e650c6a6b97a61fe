/**
 * Appending to transcripts: an append is on disk (in the kernel) when it returns, without waiting on
 * the event loop or the thread pool; the file is held open until the next flush, which closes it;
 * an exclusive create answers `false` for an existing file and writes nothing; a failed write
 * closes the file and fails with a `TranscriptIoError`; a file removed between flushes is created
 * again by the next append, as a fresh `open` did.
 */
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { assert, describe, it } from "@effect/vitest"
import { SessionStore, TranscriptAppender } from "@keel/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"

const fileIn = () => path.join(fs.mkdtempSync(path.join(tmpdir(), "keel-append-")), "projects", "p", "s1.jsonl")
const bytes = (text: string) => new TextEncoder().encode(text)

describe("TranscriptAppender", () => {
  it("an append is in the file when it returns (run synchronously: no thread-pool round trip); the file stays open until the flush", async () => {
    const appender = TranscriptAppender.make()
    const file = fileIn()
    assert.isTrue(Effect.runSync(appender.append(file, bytes("one\n"), true)))
    assert.strictEqual(fs.readFileSync(file, "utf8"), "one\n")
    assert.isTrue(Effect.runSync(appender.append(file, bytes("two\n"), false)))
    assert.strictEqual(fs.readFileSync(file, "utf8"), "one\ntwo\n")
    assert.strictEqual(appender.openFiles(), 1)
    await Effect.runPromise(appender.sync(file))
    assert.strictEqual(appender.openFiles(), 0)
    // The next append opens the file again.
    Effect.runSync(appender.append(file, bytes("three\n"), false))
    assert.strictEqual(fs.readFileSync(file, "utf8"), "one\ntwo\nthree\n")
    await Effect.runPromise(appender.sync(file))
    // A flush of a file not held open opens it to flush it.
    await Effect.runPromise(appender.sync(file))
  })

  it("an exclusive create of an existing file answers false and writes nothing", () => {
    const appender = TranscriptAppender.make()
    const file = fileIn()
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, "theirs\n")
    assert.isFalse(Effect.runSync(appender.append(file, bytes("mine\n"), true)))
    assert.strictEqual(fs.readFileSync(file, "utf8"), "theirs\n")
    assert.strictEqual(appender.openFiles(), 0)
  })

  it("a failed write fails with a TranscriptIoError naming the file and closes it", () => {
    const appender = TranscriptAppender.make()
    // Every write to /dev/full fails with ENOSPC, after a successful open.
    const error = Effect.runSync(Effect.flip(appender.append("/dev/full", bytes("lost\n"), false)))
    assert.strictEqual(error._tag, "TranscriptIoError")
    assert.match(error.message, /^could not write \/dev\/full: .*ENOSPC/)
    assert.strictEqual(appender.openFiles(), 0)
    const cannot = Effect.runSync(Effect.flip(appender.append(path.join("/dev/null", "x.jsonl"), bytes("x\n"), true)))
    assert.match(cannot.message, /^could not write \/dev\/null\/x.jsonl: /)
  })

  it("a transcript removed between flushes is created again by the next append", async () => {
    const appender = TranscriptAppender.make()
    const file = fileIn()
    Effect.runSync(appender.append(file, bytes("one\n"), true))
    await Effect.runPromise(appender.sync(file))
    fs.rmSync(file)
    Effect.runSync(appender.append(file, bytes("two\n"), false))
    assert.strictEqual(fs.readFileSync(file, "utf8"), "two\n")
    await Effect.runPromise(appender.sync(file))
  })

  it.effect("the file store appends through it: an append completes without yielding", () =>
    Effect.gen(function*() {
      const files = SessionStore.fileSystemFiles(yield* FileSystem.FileSystem, yield* Path.Path)
      const file = fileIn()
      assert.isTrue(Effect.runSync(files.append(file, bytes("one\n"), true)))
      assert.isFalse(Effect.runSync(files.append(file, bytes("two\n"), true)))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "one\n")
      yield* files.sync(file)
    }).pipe(Effect.provide(NodeContext.layer)))
})
