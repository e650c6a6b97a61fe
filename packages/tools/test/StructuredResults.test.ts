/**
 * The structured result each built-in tool gives besides its text (`Tool.Structured`), in Claude
 * Code's shapes (the output types of the Agent SDK's `sdk-tools.d.ts`, checked at compile time
 * here): Read's file and line range, Bash's stdout and stderr, Edit's and Write's patch, Grep's and
 * Glob's files, TodoWrite's lists.
 */
import { NodeContext } from "@effect/platform-node"
import type {
  BashOutput,
  FileEditOutput,
  FileReadOutput,
  FileWriteOutput,
  GlobOutput,
  GrepOutput,
  TodoWriteOutput
} from "@anthropic-ai/claude-agent-sdk/sdk-tools"
import { assert, describe, it } from "@effect/vitest"
import { Permissions, SessionState, type Tool } from "@keel/core"
import { Bash, Edit, Glob, Grep, Read, TodoWrite, Write } from "@keel/tools"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ok, structured } from "./support/Outcome.js"

const session = () =>
  Layer.mergeAll(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")), Permissions.layerDefault)

const call = <I, R>(make: Effect.Effect<Tool.Tool<I, R>, never, any>, input: I, cwd: string) =>
  Effect.flatMap(make, (tool) => tool.call(input, { toolUseId: "t", cwd })).pipe(Effect.either)

/** Compile-time: the structured results are assignable to the SDK's declared output types. */
const typed = {
  read: (r: Read.TextResult): FileReadOutput => ({ ...r, file: { ...r.file } }),
  bash: (r: Bash.Result): BashOutput => r,
  edit: (r: Edit.Result): FileEditOutput => ({ ...r, structuredPatch: r.structuredPatch.map((h) => ({ ...h, lines: [...h.lines] })) }),
  write: (r: Write.Result): FileWriteOutput => ({ ...r, structuredPatch: r.structuredPatch.map((h) => ({ ...h, lines: [...h.lines] })) }),
  glob: (r: Glob.Result): GlobOutput => ({ ...r, filenames: [...r.filenames] }),
  grep: (r: Grep.Result): GrepOutput => ({ ...r, filenames: [...r.filenames] })
}
void typed
type Todos = TodoWriteOutput["newTodos"]

const project = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-structured-"))
  fs.writeFileSync(path.join(dir, "README.md"), "# Demo\n\nIt counts sheep.\nThree lines.\n")
  fs.mkdirSync(path.join(dir, "src"))
  fs.writeFileSync(path.join(dir, "src", "a.ts"), "const sheep = 1\nconst goats = 2\nconst sheepdog = 3\n")
  return dir
}

describe("structured results", () => {
  it.effect("Read: the file's path, the lines read, where they start, how many and the file's count", () =>
    Effect.gen(function*() {
      const dir = project()
      const file = path.join(dir, "README.md")
      assert.deepStrictEqual(structured(yield* call(Read.make, { file_path: "README.md" }, dir)), {
        type: "text",
        file: { filePath: file, content: "# Demo\n\nIt counts sheep.\nThree lines.", numLines: 4, startLine: 1, totalLines: 4 }
      })
      assert.deepStrictEqual(structured(yield* call(Read.make, { file_path: file, offset: 3, limit: 1 }, dir)), {
        type: "text",
        file: { filePath: file, content: "It counts sheep.", numLines: 1, startLine: 3, totalLines: 4 }
      })
    }).pipe(Effect.provide(session())))

  it.effect("Bash: stdout and stderr apart, not interrupted", () =>
    Effect.gen(function*() {
      const dir = project()
      const result = yield* call(Bash.make, { command: "echo out; echo err >&2" }, dir)
      assert.strictEqual(ok(result), "out\nerr")
      assert.deepStrictEqual(structured(result), {
        stdout: "out",
        stderr: "err",
        interrupted: false,
        isImage: false,
        noOutputExpected: false
      })
    }).pipe(Effect.provide(Layer.merge(session(), NodeContext.layer))))

  it.effect("Edit: the strings, the file before and the patch", () =>
    Effect.gen(function*() {
      const dir = project()
      const file = path.join(dir, "README.md")
      yield* call(Read.make, { file_path: file }, dir)
      const result = structured(yield* call(Edit.make, { file_path: file, old_string: "sheep", new_string: "goats" }, dir))
      assert.deepStrictEqual(result, {
        filePath: file,
        oldString: "sheep",
        newString: "goats",
        originalFile: "# Demo\n\nIt counts sheep.\nThree lines.\n",
        structuredPatch: [{
          oldStart: 1,
          oldLines: 4,
          newStart: 1,
          newLines: 4,
          lines: [" # Demo", " ", "-It counts sheep.", "+It counts goats.", " Three lines."]
        }],
        userModified: false,
        replaceAll: false
      })
    }).pipe(Effect.provide(session())))

  it.effect("Write: created (no patch, no original) or updated (the patch and the file before)", () =>
    Effect.gen(function*() {
      const dir = project()
      const file = path.join(dir, "new.txt")
      assert.deepStrictEqual(structured(yield* call(Write.make, { file_path: file, content: "a\nb\n" }, dir)), {
        type: "create",
        filePath: file,
        content: "a\nb\n",
        structuredPatch: [],
        originalFile: null,
        userModified: false
      })
      assert.deepStrictEqual(structured(yield* call(Write.make, { file_path: file, content: "a\nc\n" }, dir)), {
        type: "update",
        filePath: file,
        content: "a\nc\n",
        structuredPatch: [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [" a", "-b", "+c"] }],
        originalFile: "a\nb\n",
        userModified: false
      })
    }).pipe(Effect.provide(session())))

  it.effect("Grep: the mode, the files, and in content and count modes the text with its line or match count", () =>
    Effect.gen(function*() {
      const dir = project()
      const files = structured(yield* call(Effect.succeed(Grep.tool), { pattern: "sheep" }, dir)) as Grep.Result
      assert.deepStrictEqual(files.mode, "files_with_matches")
      assert.deepStrictEqual([...files.filenames].sort(), ["README.md", "src/a.ts"])
      assert.strictEqual(files.numFiles, 2)
      const content = structured(yield* call(Effect.succeed(Grep.tool), { pattern: "sheep", output_mode: "content", path: "src", "-n": true }, dir))
      assert.deepStrictEqual(content, {
        mode: "content",
        numFiles: 1,
        filenames: ["src/a.ts"],
        content: "src/a.ts:1:const sheep = 1\nsrc/a.ts:3:const sheepdog = 3",
        numLines: 2
      })
      const count = structured(yield* call(Effect.succeed(Grep.tool), { pattern: "sheep", output_mode: "count", path: "src" }, dir))
      assert.deepStrictEqual(count, { mode: "count", numFiles: 1, filenames: ["src/a.ts"], content: "src/a.ts:2", numMatches: 2 })
      const paged = structured(yield* call(Effect.succeed(Grep.tool), { pattern: "sheep", head_limit: 1 }, dir)) as Grep.Result
      assert.deepStrictEqual([paged.numFiles, paged.appliedLimit], [1, 1])
    }).pipe(Effect.provide(session())))

  it.effect("Glob: the paths returned, how many, whether more matched", () =>
    Effect.gen(function*() {
      const dir = project()
      const result = structured(yield* call(Effect.succeed(Glob.tool), { pattern: "**/*.ts" }, dir)) as Glob.Result
      assert.deepStrictEqual({ ...result, durationMs: 0 }, {
        durationMs: 0,
        numFiles: 1,
        filenames: [path.join(dir, "src", "a.ts")],
        truncated: false
      })
    }).pipe(Effect.provide(session())))

  it.effect("TodoWrite: the list before and after", () =>
    Effect.gen(function*() {
      const dir = project()
      const first: Todos = [{ content: "Run the tests", status: "in_progress", activeForm: "Running the tests" }]
      const second: Todos = [{ content: "Run the tests", status: "completed", activeForm: "Running the tests" }]
      assert.deepStrictEqual(structured(yield* call(Effect.succeed(TodoWrite.tool), { todos: first }, dir)), { oldTodos: [], newTodos: first })
      assert.deepStrictEqual(structured(yield* call(Effect.succeed(TodoWrite.tool), { todos: second }, dir)), { oldTodos: first, newTodos: second })
    }).pipe(Effect.provide(session())))
})
