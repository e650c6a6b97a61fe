/**
 * The spill folder lives in a shared temporary folder: it is trusted (written by Bash, opened to
 * Read) only when it is this user's alone, and spill files older than a day are removed.
 */
import { assert, describe, it } from "@effect/vitest"
import { ToolOutputDir } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-spill-dir-"))

describe("ToolOutputDir", () => {
  it("trusts a folder of this user's with no group or other access, and removes spill files older than a day", () => {
    const dir = path.join(tmp(), "spill")
    fs.mkdirSync(dir, { mode: 0o700 })
    fs.writeFileSync(path.join(dir, "old.log"), "old")
    fs.writeFileSync(path.join(dir, "new.log"), "new")
    const twoDaysAgo = new Date(Date.now() - 2 * ToolOutputDir.MAX_AGE_MS)
    fs.utimesSync(path.join(dir, "old.log"), twoDaysAgo, twoDaysAgo)
    assert.strictEqual(ToolOutputDir.trusted(dir), dir)
    assert.deepStrictEqual(fs.readdirSync(dir), ["new.log"])
  })

  it("does not trust a folder others can open, a link to a folder, or a file", () => {
    const base = tmp()
    const open = path.join(base, "open")
    fs.mkdirSync(open)
    fs.chmodSync(open, 0o755)
    assert.isUndefined(ToolOutputDir.trusted(open))
    fs.chmodSync(open, 0o730)
    assert.isUndefined(ToolOutputDir.trusted(open))
    const mine = path.join(base, "mine")
    fs.mkdirSync(mine, { mode: 0o700 })
    const link = path.join(base, "link")
    fs.symlinkSync(mine, link)
    assert.isUndefined(ToolOutputDir.trusted(link))
    const file = path.join(base, "file")
    fs.writeFileSync(file, "")
    fs.chmodSync(file, 0o600)
    assert.isUndefined(ToolOutputDir.trusted(file))
    assert.isUndefined(ToolOutputDir.trusted(path.join(base, "missing")))
  })
})
