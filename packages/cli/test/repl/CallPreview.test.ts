import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as CallPreview from "../../src/repl/CallPreview.js"
import * as Style from "../../src/repl/Style.js"

const plain = Style.make(false)

describe("CallPreview", () => {
  it("shows a Bash call's description, then its whole command", () => {
    assert.deepStrictEqual(
      CallPreview.lines("Bash", { command: "npm ci\nnpm test", description: "Install and test" }, "/p", plain),
      ["  Install and test", "  $ npm ci", "    npm test"]
    )
  })

  it("shows an edit as a diff against the file, coloured when colours are on", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preview-"))
    fs.writeFileSync(path.join(dir, "a.txt"), "one\ntwo\nthree\n")
    const input = { file_path: "a.txt", old_string: "two", new_string: "TWO" }
    assert.deepStrictEqual(CallPreview.lines("Edit", input, dir, plain), [
      "  @@ -1,3 +1,3 @@",
      "   one",
      "  -two",
      "  +TWO",
      "   three"
    ])
    const coloured = CallPreview.lines("Edit", input, dir, Style.make(true))
    assert.include(coloured, "  \x1b[32m+TWO\x1b[39m")
    assert.include(coloured, "  \x1b[31m-two\x1b[39m")
  })

  it("cuts a long diff with a count of the lines left out", () => {
    const content = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n") + "\n"
    const shown = CallPreview.lines("Write", { file_path: "/nowhere/new.txt", content }, "/p", plain)
    assert.strictEqual(shown.length, CallPreview.MAX_DIFF_LINES + 1)
    assert.strictEqual(shown.at(-1), `  … ${31 - CallPreview.MAX_DIFF_LINES} more lines`)
  })

  it("shows an edit whose text is not in the file as the edited fragments", () => {
    assert.deepStrictEqual(CallPreview.lines("Edit", { file_path: "/nowhere/x", old_string: "a", new_string: "b" }, "/p", plain), [
      "  @@ -1,1 +1,1 @@",
      "  -a",
      "  +b"
    ])
  })
})
