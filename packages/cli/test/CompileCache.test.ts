/**
 * CompileCache: a CommonJS file compiled with its V8 code cache, each load in a fresh `node` (the
 * cache is written as the process exits): the first run writes it, the next one takes it, and a
 * corrupt cache or one left by an earlier version of the file is never used.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { assert, describe, it } from "vitest"

const loader = pathToFileURL(path.join(import.meta.dirname, "..", "dist", "CompileCache.js")).href

/** Loads `file` with the cache in `dir` in a new process: what `load` said, and the exports' `value`. */
const loadIn = (file: string, dir: string) => {
  const script = `import { load } from ${JSON.stringify(loader)}
const r = load(${JSON.stringify(file)}, ${JSON.stringify(dir)})
console.log(JSON.stringify({ cached: r.cached, writesCache: r.writesCache, value: r.exports.value }))`
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  return JSON.parse(out) as { cached: boolean; writesCache: boolean; value: unknown }
}

const fresh = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "keel-compile-cache-test-"))
  return { root, dir: path.join(root, "cache"), file: path.join(root, "main.cjs") }
}

describe("CompileCache", () => {
  it("the first run writes the cache at exit, the next takes it; a chunk required twice runs once", () => {
    const { dir, file, root } = fresh()
    fs.writeFileSync(path.join(root, "chunk.cjs"), "globalThis.__runs = (globalThis.__runs ?? 0) + 1\nexports.n = 40")
    fs.writeFileSync(path.join(root, "other.cjs"), "exports.n = require(\"./chunk.cjs\").n")
    fs.writeFileSync(file, "const a = require(\"./chunk.cjs\"), b = require(\"./other.cjs\")\nexports.value = [a.n + 2, b.n, globalThis.__runs, require(\"node:path\").sep]")
    assert.deepStrictEqual(loadIn(file, dir), { cached: false, writesCache: true, value: [42, 40, 1, "/"] })
    assert.deepStrictEqual(fs.readdirSync(dir).map((f) => f.replace(/-[0-9a-f]{8}-[0-9a-f]{8}\.v8$/, "")).sort(), ["chunk.cjs", "main.cjs", "other.cjs"])
    assert.deepStrictEqual(loadIn(file, dir), { cached: true, writesCache: false, value: [42, 40, 1, "/"] })
  })

  it("a corrupt cache is ignored (the file runs, compiled afresh) and replaced at exit", () => {
    const { dir, file } = fresh()
    fs.writeFileSync(file, "exports.value = [1, 2, 3].map((x) => x * 2)")
    loadIn(file, dir)
    const [cache] = fs.readdirSync(dir).map((f) => path.join(dir, f))
    const bytes = fs.readFileSync(cache!)
    bytes[bytes.length - 9] ^= 0xff
    fs.writeFileSync(cache!, bytes)
    assert.deepStrictEqual(loadIn(file, dir), { cached: false, writesCache: true, value: [2, 4, 6] })
    assert.deepStrictEqual(loadIn(file, dir), { cached: true, writesCache: false, value: [2, 4, 6] })
  })

  it("a cache in a folder others can write, or with a second link, is not taken (code V8 runs must be the user's own)", () => {
    const { dir, file, root } = fresh()
    fs.writeFileSync(file, "exports.value = 7")
    loadIn(file, dir)
    assert.strictEqual(loadIn(file, dir).cached, true)
    fs.chmodSync(dir, 0o777)
    assert.deepStrictEqual(loadIn(file, dir), { cached: false, writesCache: true, value: 7 })
    fs.chmodSync(dir, 0o700)
    assert.strictEqual(loadIn(file, dir).cached, true)
    const [cache] = fs.readdirSync(dir).map((f) => path.join(dir, f))
    fs.linkSync(cache!, path.join(root, "elsewhere.v8"))
    assert.strictEqual(loadIn(file, dir).cached, false)
  })

  it("a file rewritten with the same length and modification time does not get the old file's cache", () => {
    // V8 checks only a source's length against a cache: the key must tell the two files apart.
    const { dir, file } = fresh()
    // (As npm installs files: every one with the same fixed modification time.)
    const npmTime = new Date("1985-10-26T08:15:00Z")
    fs.writeFileSync(file, "exports.value = 'old'")
    fs.utimesSync(file, npmTime, npmTime)
    assert.deepStrictEqual(loadIn(file, dir).value, "old")
    fs.writeFileSync(file, "exports.value = 'new'")
    fs.utimesSync(file, npmTime, npmTime)
    assert.deepStrictEqual(loadIn(file, dir), { cached: false, writesCache: true, value: "new" })
    // The new build's cache replaced the old one's.
    assert.strictEqual(fs.readdirSync(dir).length, 1)
  })

  it("a cache under another file's name (a hash collision) is not taken: the identity inside must match", async () => {
    const { cacheKeyOf } = await import("../src/CompileCache.js")
    const { dir, file, root } = fresh()
    const other = path.join(root, "other.cjs")
    fs.writeFileSync(other, "exports.value = 'other'")
    fs.writeFileSync(file, "exports.value = 'mine!'")
    loadIn(other, dir)
    fs.renameSync(cacheKeyOf(other, dir).file, cacheKeyOf(file, dir).file)
    assert.deepStrictEqual(loadIn(file, dir), { cached: false, writesCache: true, value: "mine!" })
  })

  it("writing a cache removes those unused for a week, and leaves the caches of other files", () => {
    const { dir, file, root } = fresh()
    fs.mkdirSync(dir)
    const old = path.join(dir, "gone.cjs-00000000-00000000.v8")
    const recent = path.join(dir, "kept.cjs-00000000-00000000.v8")
    fs.writeFileSync(old, "x")
    fs.writeFileSync(recent, "x")
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 60 * 60 * 1000)
    fs.utimesSync(old, eightDaysAgo, eightDaysAgo)
    fs.writeFileSync(file, "exports.value = 1")
    loadIn(file, dir)
    assert.deepStrictEqual(fs.readdirSync(dir).map((f) => f.split("-")[0]).sort(), ["kept.cjs", "main.cjs"])
    assert.isTrue(fs.existsSync(root))
  })

  it("KEEL_COMPILE_CACHE names the folder; 0 turns the cache off", async () => {
    const { cacheDir } = await import("../src/CompileCache.js")
    assert.strictEqual(cacheDir({ KEEL_COMPILE_CACHE: "/somewhere" }), "/somewhere")
    assert.strictEqual(cacheDir({ KEEL_COMPILE_CACHE: "0" }), undefined)
    assert.strictEqual(cacheDir({}), path.join(os.tmpdir(), `keel-compile-cache-${process.getuid?.() ?? "user"}`))
  })
})
