/**
 * What a file is, from its bytes rather than its name: an image the Messages API takes (PNG, JPEG,
 * GIF, WebP), a PDF, or neither; an image's size in pixels; a PDF's page count where it can be
 * read without a PDF parser. `Read` uses it to return images and PDFs as content blocks.
 *
 * @since 0.1.0
 */

/** The image formats the API accepts. @category Models */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp"

/** What the first bytes of a file say it is. @category Models */
export type Sniffed =
  | { readonly _tag: "Image"; readonly mediaType: ImageMediaType; readonly name: string }
  | { readonly _tag: "Pdf" }

/** An image's size in pixels. @category Models */
export interface Dimensions {
  readonly width: number
  readonly height: number
}

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0): boolean =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b)

const ascii = (s: string): ReadonlyArray<number> => Array.from(s, (c) => c.charCodeAt(0))

/**
 * The image or PDF these bytes start with (their magic numbers), or `undefined` for anything else.
 *
 * @category Sniffing
 */
export const sniff = (head: Uint8Array): Sniffed | undefined => {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { _tag: "Image", mediaType: "image/png", name: "PNG" }
  if (startsWith(head, [0xff, 0xd8, 0xff])) return { _tag: "Image", mediaType: "image/jpeg", name: "JPEG" }
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) {
    return { _tag: "Image", mediaType: "image/gif", name: "GIF" }
  }
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) {
    return { _tag: "Image", mediaType: "image/webp", name: "WebP" }
  }
  if (startsWith(head, ascii("%PDF-"))) return { _tag: "Pdf" }
  return undefined
}

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8)
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)
const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!)

/** The frame size of a JPEG: the first start-of-frame marker's fields. */
const jpegSize = (b: Uint8Array): Dimensions | undefined => {
  let i = 2
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) return undefined
    const marker = b[i + 1]!
    if (marker === 0xff) {
      i++
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2
      continue
    }
    if (marker === 0xd9 || marker === 0xda) return undefined
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame && i + 8 < b.length) return { height: u16be(b, i + 5), width: u16be(b, i + 7) }
    i += 2 + u16be(b, i + 2)
  }
  return undefined
}

/** The canvas size of a WebP: from its `VP8 `, `VP8L` or `VP8X` chunk. */
const webpSize = (b: Uint8Array): Dimensions | undefined => {
  if (b.length < 30) return undefined
  if (startsWith(b, ascii("VP8 "), 12)) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff }
  if (startsWith(b, ascii("VP8L"), 12)) {
    return {
      width: 1 + (((b[22]! & 0x3f) << 8) | b[21]!),
      height: 1 + (((b[24]! & 0x0f) << 10) | (b[23]! << 2) | ((b[22]! & 0xc0) >> 6))
    }
  }
  if (startsWith(b, ascii("VP8X"), 12)) return { width: 1 + u24le(b, 24), height: 1 + u24le(b, 27) }
  return undefined
}

/**
 * The size in pixels of an image in one of the API's formats, read from its header; `undefined`
 * when the header is cut short or unusual.
 *
 * @category Sniffing
 */
export const imageSize = (bytes: Uint8Array, mediaType: ImageMediaType): Dimensions | undefined => {
  switch (mediaType) {
    case "image/png":
      return bytes.length >= 24 ? { width: u32be(bytes, 16), height: u32be(bytes, 20) } : undefined
    case "image/gif":
      return bytes.length >= 10 ? { width: u16le(bytes, 6), height: u16le(bytes, 8) } : undefined
    case "image/jpeg":
      return jpegSize(bytes)
    case "image/webp":
      return webpSize(bytes)
  }
}

/**
 * The number of page objects (`/Type /Page`) a PDF shows in plain text; `undefined` when it shows
 * none, as when its objects are compressed into object streams. An estimate, good enough to refuse
 * a PDF that is plainly too long.
 *
 * @category Sniffing
 */
export const pdfPageCount = (bytes: Uint8Array): number | undefined => {
  const text = new TextDecoder("latin1").decode(bytes)
  const pages = text.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0
  return pages > 0 ? pages : undefined
}
