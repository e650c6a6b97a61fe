/**
 * Write and Edit against real files in a temporary folder, inside a session (whose file state
 * records reads): the read-before-write rule, stale files, unique matches, atomic writes, and what a
 * write keeps (CRLF line endings, the file mode, a symlink).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { SessionState, Tool } from "@keel/core"
import { Edit, Read, Write } from "@keel/tools"
import { Effect, Fiber, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-writes-"))

/** Runs one tool call in `cwd`, inside the session state in context. */
const call = <I, R>(make: Effect.Effect<Tool.Tool<I, R>, never, any>, input: I, cwd: string) =>
  Effect.flatMap(make, (tool) => tool.call(input, { toolUseId: "t", cwd })).pipe(Effect.either)


/** A fresh session state and the platform, per test. */
const session = Layer.merge(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")))

describe("Write", () => {
  it.live("an interrupted write leaves no temporary file and does not replace the file", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const content = "x".repeat(64 * 1024 * 1024)
      const fiber = yield* Effect.fork(call(Write.make, { file_path: "big.txt", content }, dir))
      // Interrupted while its temporary file is being written.
      const temporary = () => fs.readdirSync(dir).some((f) => f.endsWith(".tmp"))
      for (let i = 0; i < 100_000 && !temporary(); i++) yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
      assert.isTrue(temporary(), "the write had started")
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(fs.readdirSync(dir), [])
    }).pipe(Effect.provide(session)) as Effect.Effect<void>, 60_000)

  it.effect("creates a new file and its folders without a prior read", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const out = ok(yield* call(Write.make, { file_path: "deep/er/new.txt", content: "hello\n" }, dir))
      assert.strictEqual(out, `File created successfully at: ${path.join(dir, "deep/er/new.txt")}`)
      assert.strictEqual(fs.readFileSync(path.join(dir, "deep/er/new.txt"), "utf8"), "hello\n")
      // No temporary file is left behind.
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, "deep/er")), ["new.txt"])
    }).pipe(Effect.provide(session)))

  it.effect("overwriting needs a read first, and fails when the file changed since", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.txt")
      fs.writeFileSync(file, "one\n")
      assert.include(err(yield* call(Write.make, { file_path: file, content: "two\n" }, dir)), "File has not been read yet")
      ok(yield* call(Read.make, { file_path: file }, dir))
      // Someone else changes the file (a later mtime).
      fs.writeFileSync(file, "changed\n")
      fs.utimesSync(file, new Date(), new Date(Date.now() + 5_000))
      assert.include(err(yield* call(Write.make, { file_path: file, content: "two\n" }, dir)), "modified since read")
      assert.strictEqual(fs.readFileSync(file, "utf8"), "changed\n")
      ok(yield* call(Read.make, { file_path: file }, dir))
      assert.strictEqual(ok(yield* call(Write.make, { file_path: file, content: "two\n" }, dir)), `The file ${file} has been updated.`)
      // Its own write counts as seen: a second write needs no new read.
      ok(yield* call(Write.make, { file_path: file, content: "three\n" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "three\n")
    }).pipe(Effect.provide(session)))
})

describe("Edit", () => {
  it.effect("replaces a unique string in a file read first", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "src.ts")
      fs.writeFileSync(file, "const a = 1\nconst b = 2\n")
      assert.include(err(yield* call(Edit.make, { file_path: file, old_string: "1", new_string: "10" }, dir)), "has not been read")
      ok(yield* call(Read.make, { file_path: file }, dir))
      ok(yield* call(Edit.make, { file_path: file, old_string: "const a = 1", new_string: "const a = 10" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "const a = 10\nconst b = 2\n")
    }).pipe(Effect.provide(session)))

  it.effect("a string that is not unique needs replace_all; a missing one is reported", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "x.txt")
      fs.writeFileSync(file, "x x x\n")
      ok(yield* call(Read.make, { file_path: file }, dir))
      assert.include(err(yield* call(Edit.make, { file_path: file, old_string: "x", new_string: "y" }, dir)), "Found 3 matches")
      assert.include(err(yield* call(Edit.make, { file_path: file, old_string: "z", new_string: "y" }, dir)), "not found")
      assert.include(err(yield* call(Edit.make, { file_path: file, old_string: "x", new_string: "x" }, dir)), "No changes")
      assert.strictEqual(
        ok(yield* call(Edit.make, { file_path: file, old_string: "x", new_string: "$&y", replace_all: true }, dir)),
        `The file ${file} has been updated (3 replacements).`
      )
      // The replacement is literal ($& is not a pattern).
      assert.strictEqual(fs.readFileSync(file, "utf8"), "$&y $&y $&y\n")
    }).pipe(Effect.provide(session)))

  it.effect("a stale file is refused; an empty old_string creates a file, but not over an existing one", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "s.txt")
      fs.writeFileSync(file, "v1\n")
      ok(yield* call(Read.make, { file_path: file }, dir))
      fs.utimesSync(file, new Date(), new Date(Date.now() + 5_000))
      assert.include(err(yield* call(Edit.make, { file_path: file, old_string: "v1", new_string: "v2" }, dir)), "modified since read")
      const created = path.join(dir, "new", "file.md")
      ok(yield* call(Edit.make, { file_path: created, old_string: "", new_string: "# New\n" }, dir))
      assert.strictEqual(fs.readFileSync(created, "utf8"), "# New\n")
      assert.include(err(yield* call(Edit.make, { file_path: path.join(dir, "nope.txt"), old_string: "a", new_string: "b" }, dir)), "does not exist")
    }).pipe(Effect.provide(session)))

  it.effect("a read counts only in its own session: in another session the file has not been read", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.txt")
      fs.writeFileSync(file, "a\n")
      ok(yield* call(Read.make, { file_path: file }, dir).pipe(
        Effect.provideService(SessionState.SessionState, yield* SessionState.make("reader"))
      ))
      assert.include(
        err(yield* call(Edit.make, { file_path: file, old_string: "a", new_string: "b" }, dir).pipe(
          Effect.provideService(SessionState.SessionState, yield* SessionState.make("editor"))
        )),
        "has not been read"
      )
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a\n")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("outside a session a file tool cannot be called: the session state is a requirement of its calls", () =>
    Effect.gen(function*() {
      const edit = yield* Edit.make
      const read = yield* Read.make
      const write = yield* Write.make
      // Run with no SessionState: the compiler refuses each (the state is in the calls' requirements).
      const run = <A, E>(_: Effect.Effect<A, E, never>) => undefined
      // @ts-expect-error Edit's call requires SessionState
      run(edit.call({ file_path: "a", old_string: "a", new_string: "b" }, { toolUseId: "t", cwd: "/" }))
      // @ts-expect-error Read's call requires SessionState
      run(read.call({ file_path: "a" }, { toolUseId: "t", cwd: "/" }))
      // @ts-expect-error Write's call requires SessionState
      run(write.call({ file_path: "a", content: "" }, { toolUseId: "t", cwd: "/" }))
      // With a session state they compile: the state is all they lack.
      const state = yield* SessionState.make("s")
      run(edit.call({ file_path: "a", old_string: "a", new_string: "b" }, { toolUseId: "t", cwd: "/" }).pipe(
        Effect.provideService(SessionState.SessionState, state)
      ))
      run(read.call({ file_path: "a" }, { toolUseId: "t", cwd: "/" }).pipe(Effect.provideService(SessionState.SessionState, state)))
      run(write.call({ file_path: "a", content: "" }, { toolUseId: "t", cwd: "/" }).pipe(
        Effect.provideService(SessionState.SessionState, state)
      ))
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("what a write keeps", () => {
  it.effect("a CRLF file: Edit matches the lines as Read shows them (LF) and the file keeps CRLF", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "win.ts")
      fs.writeFileSync(file, "function f() {\r\n  return 1\r\n}\r\n")
      const shown = ok(yield* call(Read.make, { file_path: file }, dir))
      assert.notInclude(shown, "\r")
      // A multi-line old_string, copied from Read's LF lines.
      ok(yield* call(Edit.make, { file_path: file, old_string: "  return 1\n}", new_string: "  return 2\n  // two\n}" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "function f() {\r\n  return 2\r\n  // two\r\n}\r\n")
      // An old_string sent with CRLF matches too.
      ok(yield* call(Edit.make, { file_path: file, old_string: "return 2\r\n", new_string: "return 3\n" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "function f() {\r\n  return 3\r\n  // two\r\n}\r\n")
    }).pipe(Effect.provide(session)))

  it.effect("a file with mixed line endings is matched byte for byte and its other lines are left alone", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "mixed.txt")
      fs.writeFileSync(file, "a\r\nb\nc\r\n")
      ok(yield* call(Read.make, { file_path: file }, dir))
      assert.include(err(yield* call(Edit.make, { file_path: file, old_string: "a\nb", new_string: "x" }, dir)), "not found")
      ok(yield* call(Edit.make, { file_path: file, old_string: "b\n", new_string: "B\n" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a\r\nB\nc\r\n")
    }).pipe(Effect.provide(session)))

  it.effect("Write over a CRLF file with LF content writes CRLF; content with its own \\r is written as given", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "win.txt")
      fs.writeFileSync(file, "one\r\ntwo\r\n")
      ok(yield* call(Read.make, { file_path: file }, dir))
      ok(yield* call(Write.make, { file_path: file, content: "uno\ndos\n" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "uno\r\ndos\r\n")
      ok(yield* call(Write.make, { file_path: file, content: "a\r\nb\n" }, dir))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a\r\nb\n")
      // A new file is written as given.
      ok(yield* call(Write.make, { file_path: path.join(dir, "new.txt"), content: "x\ny\n" }, dir))
      assert.strictEqual(fs.readFileSync(path.join(dir, "new.txt"), "utf8"), "x\ny\n")
    }).pipe(Effect.provide(session)))

  it.effect("Edit and Write keep an executable file's mode", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const script = path.join(dir, "run.sh")
      fs.writeFileSync(script, "#!/bin/sh\necho one\n", { mode: 0o750 })
      fs.chmodSync(script, 0o750)
      ok(yield* call(Read.make, { file_path: script }, dir))
      ok(yield* call(Edit.make, { file_path: script, old_string: "echo one", new_string: "echo two" }, dir))
      assert.strictEqual(fs.statSync(script).mode & 0o7777, 0o750)
      ok(yield* call(Write.make, { file_path: script, content: "#!/bin/sh\necho three\n" }, dir))
      assert.strictEqual(fs.statSync(script).mode & 0o7777, 0o750)
      assert.strictEqual(fs.readFileSync(script, "utf8"), "#!/bin/sh\necho three\n")
    }).pipe(Effect.provide(session)))

  it.effect("a symlink is written through: the link stays a link and its target gets the content", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.mkdirSync(path.join(dir, "config"))
      const target = path.join(dir, "config", "settings.json")
      const link = path.join(dir, "settings.json")
      fs.writeFileSync(target, "{\"a\": 1}\n")
      fs.symlinkSync("config/settings.json", link)
      ok(yield* call(Read.make, { file_path: link }, dir))
      ok(yield* call(Edit.make, { file_path: link, old_string: "1", new_string: "2" }, dir))
      assert.isTrue(fs.lstatSync(link).isSymbolicLink())
      assert.strictEqual(fs.readFileSync(target, "utf8"), "{\"a\": 2}\n")
      // Its own write counts as seen through the link: a second change needs no new read.
      ok(yield* call(Write.make, { file_path: link, content: "{\"a\": 3}\n" }, dir))
      assert.isTrue(fs.lstatSync(link).isSymbolicLink())
      assert.strictEqual(fs.readFileSync(target, "utf8"), "{\"a\": 3}\n")
      // No temporary file is left beside the link or the target.
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, "config")), ["settings.json"])
      assert.deepStrictEqual(fs.readdirSync(dir).sort(), ["config", "settings.json"])
    }).pipe(Effect.provide(session)))
})

describe("Write and Edit on what is not a regular file", () => {
  it.effect("a read file swapped for a named pipe (same mtime) is refused at once, not read (that would block)", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.txt")
      fs.writeFileSync(file, "one\n")
      ok(yield* call(Read.make, { file_path: file }, dir))
      const { mtime } = fs.statSync(file)
      fs.rmSync(file)
      execFileSync("mkfifo", [file])
      fs.utimesSync(file, mtime, mtime)
      const refusal = `${file} is a named pipe (FIFO), not a regular file; file tools read and write regular files only ` +
        "(reading a pipe, socket or device could wait for ever)."
      assert.strictEqual(err(yield* call(Write.make, { file_path: file, content: "two\n" }, dir)), refusal)
      assert.strictEqual(err(yield* call(Edit.make, { file_path: file, old_string: "one", new_string: "two" }, dir)), refusal)
      assert.isTrue(fs.statSync(file).isFIFO())
      assert.include(
        err(yield* call(Write.make, { file_path: "/dev/null", content: "x" }, dir)),
        "/dev/null is a character device, not a regular file"
      )
    }).pipe(Effect.provide(session)), 10_000)
})
