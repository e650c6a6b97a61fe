import { assert, describe, it } from "@effect/vitest"
import { blockRenderer, codeHighlighter, MarkdownStream } from "../../src/repl/Markdown.js"

const stream = (color = false) => new MarkdownStream(blockRenderer({ color, width: 80 }), codeHighlighter(color))

/** Feeds `text` in pieces of `size` characters; returns everything rendered. */
const feed = (md: MarkdownStream, text: string, size: number): string => {
  let out = ""
  for (let i = 0; i < text.length; i += size) out += md.push(text.slice(i, i + size))
  return out + md.end()
}

describe("MarkdownStream", () => {
  it("renders a line only once its newline has arrived, and keeps the rest as the partial line", () => {
    const md = stream()
    assert.strictEqual(md.push("Hello **wor"), "")
    assert.strictEqual(md.partial(), "Hello **wor")
    assert.strictEqual(md.push("ld**\nnext"), "Hello world\n")
    assert.strictEqual(md.partial(), "next")
    assert.strictEqual(md.end(), "next\n")
  })

  it("renders the same whatever the delta sizes", () => {
    const text = "# Title\n\nSome *emphasis* and `code`.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n```ts\nconst x = 1\n```\nafter"
    const whole = feed(stream(), text, text.length)
    for (const size of [1, 3, 7, 16]) assert.strictEqual(feed(stream(), text, size), whole)
    assert.include(whole, "Some emphasis and code.")
    assert.match(whole, /\* one\n\* two\n {2}\* nested/)
    assert.match(whole, /1\. first\n2\. second/)
  })

  it("prints code blocks line by line, indented, without their fences", () => {
    const plain = feed(stream(), "```js\nconst a = 1\nlet b = 'x'\n```\n", 4)
    assert.strictEqual(plain, "  const a = 1\n  let b = 'x'\n")
    const md = stream()
    md.push("```js\n")
    // The code line is out as soon as it is complete, before the block closes.
    assert.strictEqual(md.push("const a = 1\n"), "  const a = 1\n")
  })

  it("highlights code lines in the fence's language (with colours)", () => {
    const seen: Array<[string, string]> = []
    const md = new MarkdownStream(blockRenderer({ color: false, width: 80 }), (line, language) => {
      seen.push([line, language])
      return `<${line}>`
    })
    assert.strictEqual(md.push("```python\nx = 1\n```\n"), "  <x = 1>\n")
    assert.deepStrictEqual(seen, [["x = 1", "python"]])
  })

  it("keeps Markdown inside code blocks as written", () => {
    assert.strictEqual(feed(stream(), "```\n**not bold** # not a heading\n```\n", 5), "  **not bold** # not a heading\n")
  })

  it("renders a table once its last row is in", () => {
    const md = stream()
    assert.strictEqual(md.push("| a | b |\n|---|---|\n| 1 | 2 |\n"), "")
    const out = md.push("after\n")
    assert.match(out, /│ a +│ b +│/)
    assert.match(out, /│ 1 +│ 2 +│/)
    assert.isTrue(out.endsWith("after\n"))
  })

  it("collapses runs of blank lines to one, and has no escapes without colours", () => {
    const out = feed(stream(), "a\n\n\n\nb **c**\n", 2)
    assert.strictEqual(out, "a\n\nb c\n")
    assert.notInclude(feed(stream(false), "# T\n**b** `c`\n", 3), "\x1b[")
  })

  it("renders headings as their text alone, without # markers: bold, the first two levels underlined", () => {
    const plain = feed(stream(), "# One\n## Two *em*\n### Three\n", 4)
    assert.strictEqual(plain, "One\nTwo em\nThree\n")
    const coloured = feed(stream(true), "## Two\n### Three\n", 4)
    assert.include(coloured, "\x1b[1m\x1b[4mTwo\x1b[24m\x1b[22m")
    assert.include(coloured, "\x1b[1mThree\x1b[22m")
    assert.notInclude(coloured, "#")
  })
})
