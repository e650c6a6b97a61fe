/**
 * Where every id the kernel makes comes from: session ids, the `uuid` of each SDK message and
 * transcript entry, request ids. One service, so a test (or a replay) that provides a seeded
 * generator gets the same ids on every run, and output that is byte-identical run to run.
 *
 * `uuid` is synchronous: the session stamps an id on every message it emits (one per streamed event
 * with partial messages on), and an effect per id would cost more than the rest of the work.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"

/** @category Models */
export interface Service {
  /** A new RFC 4122 version 4 UUID (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`). */
  readonly uuid: () => string
}

/** @category Context */
export class Ids extends Context.Tag("@keel/core/Ids")<Ids, Service>() {}

/** Ids from the platform's cryptographic generator (`crypto.randomUUID`): what a real run uses. @category Constructors */
export const crypto: Service = Ids.of({ uuid: () => globalThis.crypto.randomUUID() })

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

/** A UUID v4 string from 16 random bytes (the version and variant bits are set here). */
const format = (bytes: Uint8Array): string => {
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  let out = ""
  for (let i = 0; i < 16; i++) {
    out += HEX[bytes[i]!]
    if (i === 3 || i === 5 || i === 7 || i === 9) out += "-"
  }
  return out
}

/**
 * Ids from a seeded generator (xoshiro128**, seeded with splitmix32): the same seed gives the same
 * ids in the same order, on every run and every machine. For tests and replays, not for secrets.
 *
 * @category Constructors
 */
export const seeded = (seed: number): Service => {
  let s = seed >>> 0
  const splitmix = () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
  let a = splitmix()
  let b = splitmix()
  let c = splitmix()
  let d = splitmix()
  const next = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0
    const t = (b << 9) >>> 0
    c ^= a
    d ^= b
    b ^= c
    a ^= d
    c ^= t
    d = rotl(d, 11)
    return result
  }
  const bytes = new Uint8Array(16)
  return Ids.of({
    uuid: () => {
      for (let i = 0; i < 16; i += 4) {
        const n = next()
        bytes[i] = n & 0xff
        bytes[i + 1] = (n >>> 8) & 0xff
        bytes[i + 2] = (n >>> 16) & 0xff
        bytes[i + 3] = (n >>> 24) & 0xff
      }
      return format(bytes)
    }
  })
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0

/** Ids from `crypto.randomUUID` (see {@link crypto}). @category Layers */
export const layer: Layer.Layer<Ids> = Layer.succeed(Ids, crypto)

/** Ids from a generator seeded with `seed` (see {@link seeded}). @category Layers */
export const layerSeeded = (seed: number): Layer.Layer<Ids> => Layer.succeed(Ids, seeded(seed))

/**
 * Ids from a generator seeded by Effect's `Random` when the layer is built: with a fixed `Random`
 * (`Layer.setRandom(Random.make(seed))`, as the testing layer sets it) the ids repeat run to run.
 *
 * @category Layers
 */
export const layerRandom: Layer.Layer<Ids> = Layer.effect(
  Ids,
  Effect.map(Random.nextIntBetween(0, 2 ** 31), seeded)
)
