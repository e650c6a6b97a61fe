/**
 * Read on real files in a temporary folder: text as numbered lines, images and PDFs as content
 * blocks (recognised by their bytes), and clear refusals.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { FileState, SessionState, Tool } from "@keel/core"
import { MediaType, Read } from "@keel/tools"
import { Effect, Either, Layer } from "effect"
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

/** The platform and a fresh session state (Read records what it reads in the session). */
const session = Layer.merge(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")))

const read = (input: { file_path: string; offset?: number; limit?: number }) =>
  Effect.flatMap(Read.make, (tool) => tool.call(input, { toolUseId: "t", cwd: dir })).pipe(
    Effect.either,
    Effect.provide(session)
  )

/** The content blocks of a call expected to succeed with blocks. */
const blocks = (e: Either.Either<Tool.CallResult, Tool.ToolError>): ReadonlyArray<any> => {
  if (Either.isLeft(e)) assert.fail(`expected output, got error: ${e.left.message}`)
  const output = Tool.outputOf(e.right)
  if (typeof output === "string") assert.fail(`expected content blocks, got text: ${output.slice(0, 200)}`)
  return output as ReadonlyArray<any>
}

/** Real 3×2 images, as image libraries write them (Pillow): PNG, baseline JPEG, GIF, and WebP in its three layouts. */
const images = {
  png: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAFUlEQVR4nGM8ISfHwMDAwMDAxAADABMuAQhqwGVhAAAAAElFTkSuQmCC",
  jpeg:
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAFA3PEY8MlBGQUZaVVBfeMiCeG5uePWvuZHI////////////////////////////////////////////////////wAALCAACAAMBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAAAP/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AP//Z",
  gif: "R0lGODdhAwACAIEAAMgeHgAAAAAAAAAAACwAAAAAAwACAAAIBgABCBwYEAA7",
  webpLossless: "UklGRh4AAABXRUJQVlA4TBEAAAAvAkAAAAdQjyLXo/+BiOh/AAA=",
  webpLossy: "UklGRjYAAABXRUJQVlA4ICoAAACQAQCdASoDAAIAAsBMJaACdLoAA5gA/u2QP4hd7G2//PTP62/j/xkAAAA=",
  webpExtended:
    "UklGRkYAAABXRUJQVlA4WAoAAAAQAAAAAgAAAQAAQUxQSAcAAAAAZGRkZGRkAFZQOCAYAAAAMAEAnQEqAwACAALATCWkAANwAP734IAA"
}
const bytesOf = (base64: string) => new Uint8Array(Buffer.from(base64, "base64"))

/** A PNG header claiming `width`×`height` pixels, padded with zeros to `size` bytes. */
const pngHeader = (width: number, height: number, size: number) => {
  const bytes = new Uint8Array(size)
  bytes.set(bytesOf(images.png).subarray(0, 33))
  new DataView(bytes.buffer).setUint32(16, width)
  new DataView(bytes.buffer).setUint32(20, height)
  return bytes
}

/** A valid PDF of `pages` pages, each saying hello (uncompressed objects, a correct xref table). */
const pdf = (pages: number): Uint8Array => {
  const content = "BT /F1 18 Tf 20 40 Td (Hello from a PDF) Tj ET"
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(" ")}] /Count ${pages} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    ...Array.from({ length: pages }, () =>
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 3 0 R >> >> >>")
  ]
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(out)
}

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
      assert.strictEqual(
        err(yield* read({ file_path: bin })),
        `${bin} is a binary file (5 bytes); Read reads text files, images (PNG, JPEG, GIF, WebP) and PDFs only. ` +
          "Inspect it with a shell command (for example `file` or `xxd | head`) instead."
      )
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

  it.effect("returns PNG, JPEG, GIF and WebP images as image blocks with their media type and base64 bytes", () =>
    Effect.gen(function*() {
      const cases = [
        ["a.png", images.png, "image/png"],
        ["a.jpg", images.jpeg, "image/jpeg"],
        ["a.gif", images.gif, "image/gif"],
        ["lossless.webp", images.webpLossless, "image/webp"],
        ["lossy.webp", images.webpLossy, "image/webp"],
        ["extended.webp", images.webpExtended, "image/webp"]
      ] as const
      for (const [name, base64, mediaType] of cases) {
        const file = write(name, bytesOf(base64))
        const out = blocks(yield* read({ file_path: file }))
        assert.strictEqual(out.length, 1, name)
        assert.strictEqual(out[0].type, "image", name)
        assert.deepStrictEqual(out[0].source, { type: "base64", media_type: mediaType, data: base64 }, name)
        assert.deepStrictEqual(MediaType.imageSize(bytesOf(base64), mediaType), { width: 3, height: 2 }, name)
      }
    }))

  it.effect("knows an image by its bytes, not its name", () =>
    Effect.gen(function*() {
      const png = write("screenshot.txt", bytesOf(images.png))
      assert.strictEqual(blocks(yield* read({ file_path: png }))[0].source.media_type, "image/png")
      const jpeg = write("photo.png", bytesOf(images.jpeg))
      assert.strictEqual(blocks(yield* read({ file_path: jpeg }))[0].source.media_type, "image/jpeg")
      const noExtension = write("picture", bytesOf(images.webpLossy))
      assert.strictEqual(blocks(yield* read({ file_path: noExtension }))[0].source.media_type, "image/webp")
      // A text file named like an image is read as text.
      const text = write("notes.png", "not really a picture\n")
      assert.strictEqual(ok(yield* read({ file_path: text })), "     1\tnot really a picture")
    }))

  it.effect("refuses an image over 3.75 MB or over 8000 pixels on a side, saying what to do", () =>
    Effect.gen(function*() {
      const big = write("big.png", pngHeader(100, 100, Read.MAX_IMAGE_BYTES + 1))
      assert.strictEqual(
        err(yield* read({ file_path: big })),
        `${big} is a PNG image of 3.75 MB; Read returns images up to 3.75 MB (the API takes 5 MB per image, base64 encoded). ` +
          "Make a smaller copy with an image tool in Bash (for example `convert in.png -resize 50% out.png`) and read that."
      )
      const justUnder = write("under.png", pngHeader(100, 100, Read.MAX_IMAGE_BYTES))
      assert.strictEqual(blocks(yield* read({ file_path: justUnder }))[0].type, "image")
      const wide = write("wide.png", pngHeader(9000, 20, 1000))
      assert.include(err(yield* read({ file_path: wide })), "is a PNG image of 9000×20 pixels; the API takes at most 8000 pixels on a side.")
    }))

  it.effect("returns a PDF as a document block, and refuses one too large or too long", () =>
    Effect.gen(function*() {
      const bytes = pdf(2)
      const file = write("doc.pdf", bytes)
      const out = blocks(yield* read({ file_path: file }))
      assert.strictEqual(out.length, 1)
      assert.strictEqual(out[0].type, "document")
      assert.deepStrictEqual(out[0].source, {
        type: "base64",
        media_type: "application/pdf",
        data: Buffer.from(bytes).toString("base64")
      })
      // By its bytes again: a PDF without the extension.
      assert.strictEqual(blocks(yield* read({ file_path: write("report", bytes) }))[0].type, "document")
      const long = write("long.pdf", pdf(Read.MAX_PDF_PAGES + 1))
      assert.include(err(yield* read({ file_path: long })), "is a PDF of about 101 pages; the API reads at most 100 pages at once.")
      const huge = new Uint8Array(Read.MAX_PDF_BYTES + 1)
      huge.set(bytes)
      const large = write("large.pdf", huge)
      assert.include(err(yield* read({ file_path: large })), "is a PDF of 20 MB; Read returns PDFs up to 20 MB.")
    }))

  it.effect("records the file's mtime in the session, for text and images alike", () =>
    Effect.gen(function*() {
      const text = write("seen.txt", "x\n")
      const image = write("seen.gif", bytesOf(images.gif))
      const tool = yield* Read.make
      for (const file of [text, image]) {
        yield* tool.call({ file_path: file }, { toolUseId: "t", cwd: dir })
        assert.strictEqual(yield* FileState.lastSeen(file), fs.statSync(file).mtime.getTime())
      }
    }).pipe(Effect.provide(session)))

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
