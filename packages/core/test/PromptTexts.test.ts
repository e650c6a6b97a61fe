/**
 * The prompt texts are Markdown (`packages/core/src/prompt/text`, `packages/tools/src/text`) compiled
 * into `Texts.generated.ts` modules by `scripts/prompt-texts.mjs`. These tests fail when a module is
 * not what its Markdown gives (someone edited one without the other: run `npm run prompt-texts`),
 * and check how a file becomes an export.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as PromptTexts from "../../../scripts/prompt-texts.mjs"

describe("prompt texts", () => {
  it("each generated module is what its Markdown files give", () => {
    assert.deepStrictEqual(PromptTexts.TARGETS, ["packages/core/src/prompt/text", "packages/tools/src/text"])
    assert.deepStrictEqual(PromptTexts.stale(), [], "run npm run prompt-texts")
  })

  it("a file becomes a constant, or a function of exactly its placeholders; comments are not sent", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-texts-"))
    fs.writeFileSync(path.join(dir, "plain-text.md"), "<!-- for editors -->\nHello, *world*.\n\n")
    fs.writeFileSync(path.join(dir, "Filled.md"), "At most {{MAX}} lines, {{ MAX }} again, of {{name}}.\n")
    const module = PromptTexts.render(dir)
    assert.include(module, "export const plainText = \"Hello, *world*.\"\n")
    assert.notInclude(module, "for editors")
    assert.include(module, "export const Filled = (values: {\n  readonly MAX: Value\n  readonly name: Value\n}): string =>")
    // The module runs: numbers get thousands separators.
    const file = path.join(dir, "Texts.generated.ts")
    fs.writeFileSync(file, module)
    const loaded = await import(file)
    assert.strictEqual(loaded.Filled({ MAX: 2000, name: "a.ts" }), "At most 2,000 lines, 2,000 again, of a.ts.")
    // Written without Intl (costly to set up at start-up), as en-US writes them.
    for (const n of [0, 7, 999, 1000, 25_000, 1_234_567, -1500, 1.5, 12_345.678, 2 ** 60]) {
      assert.strictEqual(loaded.Filled({ MAX: n, name: "" }).split(" ")[2], n.toLocaleString("en-US"), String(n))
    }
    assert.strictEqual(loaded.plainText, "Hello, *world*.")
  })

  it("a malformed placeholder or an empty file is refused", () => {
    const broken = fs.mkdtempSync(path.join(os.tmpdir(), "keel-texts-"))
    fs.writeFileSync(path.join(broken, "Broken.md"), "At most {{MAX lines.")
    assert.throws(() => PromptTexts.render(broken), /malformed placeholder/)
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "keel-texts-"))
    fs.writeFileSync(path.join(empty, "Empty.md"), "<!-- only a note -->\n")
    assert.throws(() => PromptTexts.render(empty), /empty/)
  })
})
