import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Tool } from "@keel/core"
import { Read } from "@keel/tools"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-read-"))
const write = (name: string, content: string | Uint8Array) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, content)
  return file
}

const read = (input: { file_path: string; offset?: number; limit?: number }) =>
  Effect.flatMap(Read.make, (tool) => tool.call(input, { toolUseId: "t", cwd: dir })).pipe(
    Effect.either,
    Effect.provide(NodeContext.layer)
  )


describe("Read", () => {
  it.effect("numbers lines cat -n style", () =>
    Effect.gen(function*() {
      const file = write("a.txt", "alpha\nbeta\r\ngamma\n")
      assert.strictEqual(ok(yield* read({ file_path: file })), "     1\talpha\n     2\tbeta\n     3\tgamma")
    }))

  it.effect("resolves a relative path against the working directory", () =>
    Effect.gen(function*() {
      write("rel.txt", "x")
      assert.strictEqual(ok(yield* read({ file_path: "rel.txt" })), "     1\tx")
    }))

  it.effect("offset and limit select lines, numbered from the offset, with a note on what was shown", () =>
    Effect.gen(function*() {
      const file = write("ten.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"))
      assert.strictEqual(
        ok(yield* read({ file_path: file, offset: 4, limit: 2 })),
        "     4\tline 4\n     5\tline 5\n\n(Lines 4-5 of 10. Use offset and limit to read other parts.)"
      )
    }))

  it.effect("reads 2,000 lines by default and says how many there are", () =>
    Effect.gen(function*() {
      const file = write("long.txt", Array.from({ length: 2500 }, (_, i) => `${i + 1}`).join("\n"))
      const out = ok(yield* read({ file_path: file }))
      const lines = out.split("\n")
      assert.strictEqual(lines[1999], "  2000\t2000")
      assert.strictEqual(lines[2001], "(Lines 1-2000 of 2500. Use offset and limit to read other parts.)")
    }))

  it.effect("cuts long lines", () =>
    Effect.gen(function*() {
      const file = write("wide.txt", "x".repeat(5000))
      const out = ok(yield* read({ file_path: file }))
      assert.strictEqual(out, `     1\t${"x".repeat(2000)}… [line truncated]`)
    }))

  it.effect("refuses binary files, directories, missing files and offsets past the end with a clear message", () =>
    Effect.gen(function*() {
      const bin = write("blob.bin", new Uint8Array([0x89, 0x50, 0x00, 0x01, 0x02]))
      assert.include(err(yield* read({ file_path: bin })), "is a binary file (5 bytes)")
      assert.include(err(yield* read({ file_path: dir })), "is a directory")
      assert.strictEqual(
        err(yield* read({ file_path: "missing.txt" })),
        `File does not exist: ${path.join(dir, "missing.txt")}. The working directory is ${dir}.`
      )
      const file = write("three.txt", "1\n2\n3")
      assert.include(err(yield* read({ file_path: file, offset: 9 })), "has 3 lines; offset 9 is past the end")
    }))

  it.effect("says when a file is empty", () =>
    Effect.gen(function*() {
      const file = write("empty.txt", "")
      assert.strictEqual(ok(yield* read({ file_path: file })), `(${file} exists but is empty)`)
    }))

  it.effect("its input schema goes to the API with Claude Code's field names", () =>
    Effect.gen(function*() {
      const tool = yield* Read.make.pipe(Effect.provide(NodeContext.layer))
      const def = Tool.toDefinition(tool)
      assert.strictEqual(def.name, "Read")
      assert.deepStrictEqual(def.input_schema.required, ["file_path"])
      assert.deepStrictEqual(Object.keys(def.input_schema.properties as object), ["file_path", "offset", "limit"])
      assert.strictEqual(def.input_schema.type, "object")
      assert.isTrue(tool.isReadOnly({ file_path: "x" }) && tool.isConcurrencySafe({ file_path: "x" }))
    }))
})
