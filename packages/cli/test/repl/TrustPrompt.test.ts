/**
 * Folder trust: the trusted-folders file (a parent covers its children, a sibling with the same
 * prefix does not, a broken file trusts nothing) and the answers the trust question takes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PassThrough } from "node:stream"
import * as TrustPrompt from "../../src/repl/TrustPrompt.js"
import * as Style from "../../src/repl/Style.js"
import * as TrustedFolders from "../../src/settings/TrustedFolders.js"

const temp = (name: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `keel-trust-${name}-`)))

describe("TrustedFolders", () => {
  it("a trusted folder covers its subfolders and its symlinked aliases, not its prefix-sharing siblings", () => {
    const home = temp("home")
    const base = temp("base")
    const project = path.join(base, "project")
    fs.mkdirSync(path.join(project, "a", "b"), { recursive: true })
    fs.mkdirSync(path.join(base, "project-other"))
    fs.symlinkSync(project, path.join(base, "alias"))
    assert.isFalse(TrustedFolders.isTrusted(home, project))
    TrustedFolders.trust(home, project)
    assert.isTrue(TrustedFolders.isTrusted(home, project))
    assert.isTrue(TrustedFolders.isTrusted(home, path.join(project, "a", "b")))
    assert.isTrue(TrustedFolders.isTrusted(home, path.join(base, "alias")))
    assert.isFalse(TrustedFolders.isTrusted(home, path.join(base, "project-other")))
    assert.isFalse(TrustedFolders.isTrusted(home, base))
    TrustedFolders.trust(home, project)
    assert.deepStrictEqual(TrustedFolders.list(home), [project])
    assert.strictEqual(fs.statSync(TrustedFolders.fileOf(home)).mode & 0o777, 0o600)
  })

  it("a missing, malformed or oversized file, or relative entries, trust nothing", () => {
    const home = temp("bad")
    const project = temp("p")
    assert.deepStrictEqual(TrustedFolders.list(home), [])
    for (const text of ["not json", "[]", `{"folders": "${project}"}`, `{"folders": ["relative/path", 3]}`]) {
      fs.writeFileSync(TrustedFolders.fileOf(home), text)
      assert.isFalse(TrustedFolders.isTrusted(home, project), text)
    }
    fs.writeFileSync(TrustedFolders.fileOf(home), JSON.stringify({ folders: [project], pad: "x".repeat(TrustedFolders.MAX_BYTES) }))
    assert.isFalse(TrustedFolders.isTrusted(home, project))
  })
})

describe("TrustPrompt", () => {
  it("keys: y and Enter trust; n, Esc, Ctrl+C and Ctrl+D do not; other keys are no answer", () => {
    for (const key of ["y", "Y", "\r"]) assert.isTrue(TrustPrompt.keyAnswer(key), JSON.stringify(key))
    for (const key of ["n", "N", "\x1b", "\x03", "\x04"]) assert.isFalse(TrustPrompt.keyAnswer(key), JSON.stringify(key))
    for (const key of ["x", " ", "1"]) assert.isUndefined(TrustPrompt.keyAnswer(key))
    assert.isTrue(TrustPrompt.lineAnswer("yes"))
    assert.isTrue(TrustPrompt.lineAnswer(" Y "))
    for (const line of [undefined, "", "no", "yes please", "sure"]) assert.isFalse(TrustPrompt.lineAnswer(line))
  })

  it("from a pipe, the first line answers and the lines after it stay for the REPL", async () => {
    const home = temp("pipe")
    const project = temp("pp")
    const input = new PassThrough() as unknown as NodeJS.ReadStream
    const output = new PassThrough() as unknown as NodeJS.WriteStream
    const style = Style.make(false)
    ;(input as unknown as PassThrough).write("y\nfirst prompt\n")
    assert.isTrue(await TrustPrompt.ensureTrusted({ input, output }, style, home, project))
    assert.isTrue(TrustedFolders.isTrusted(home, project))
    assert.strictEqual(String((input as unknown as PassThrough).read()), "first prompt\n")
    // Trusted now: no question, nothing read.
    ;(input as unknown as PassThrough).write("second\n")
    assert.isTrue(await TrustPrompt.ensureTrusted({ input, output }, style, home, project))
    assert.strictEqual(String((input as unknown as PassThrough).read()), "second\n")
  })
})
