/**
 * Write and Edit against real files in a temporary folder, inside a session (whose file state
 * records reads): the read-before-write rule, stale files, unique matches, atomic writes.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { SessionState, Tool } from "@keel/core"
import { Edit, Read, Write } from "@keel/tools"
import { Effect, Layer } from "effect"
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
