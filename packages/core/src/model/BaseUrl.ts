/**
 * Whether the API's base URL can be fetched at all, decided from the URL itself before any request:
 * it must parse, be `http:` or `https:`, and not name a port the fetch standard blocks ("bad ports":
 * `fetch` refuses them without touching the network, so no retry can ever succeed).
 *
 * @since 0.1.0
 */
import { InvalidBaseUrl } from "./ModelError.js"

/** The fetch standard's blocked ports (https://fetch.spec.whatwg.org/#port-blocking). @category Constants */
export const BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080
])

/**
 * The reason `url` cannot be fetched, as an `InvalidBaseUrl`, or `undefined` when it can be.
 *
 * @category Validation
 */
export const check = (url: string): InvalidBaseUrl | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return new InvalidBaseUrl({ message: "it is not a valid URL", url })
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return new InvalidBaseUrl({ message: `its scheme ${parsed.protocol} is not http: or https:`, url })
  }
  // (A default port is "" and never blocked.)
  if (parsed.port !== "" && BAD_PORTS.has(Number(parsed.port))) {
    return new InvalidBaseUrl({ message: `port ${parsed.port} is one fetch refuses to connect to (a blocked port)`, url })
  }
  return undefined
}
