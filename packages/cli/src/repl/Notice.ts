/**
 * The short notices the REPL prints for what happens around the model: retries, waits, stalls,
 * fallbacks, compactions, discarded partial answers, denials.
 *
 * @since 0.1.0
 */
import { SdkMessage } from "@keel/core"

const seconds = (ms: number): string => `${Math.max(0, Math.round(ms / 100) / 10)} s`.replace(/\.0 s$/, " s")

const thousands = (n: number): string => (n >= 1_000 ? `${Math.round(n / 1_000)}k` : String(n))

/** ` (2/10): overloaded`: the attempt and why the request failed. */
const retrySuffix = (message: SdkMessage.ApiRetry): string => {
  const why = message.error === "unknown" ? message.error_message : message.error.replace(/_/g, " ")
  const max = message.max_retries >= SdkMessage.UNBOUNDED_RETRIES ? "∞" : message.max_retries
  return ` (${message.attempt}/${max}): ${why}`
}

/**
 * A retry's countdown with `secondsLeft` whole seconds to go (`retrying in 3 s (2/10): overloaded`).
 *
 * @category Rendering
 */
export const retryIn = (message: SdkMessage.ApiRetry, secondsLeft: number): string =>
  `retrying in ${secondsLeft} s${retrySuffix(message)}`

/**
 * The notice for a system message, if it has one (`retrying in 4 s (2/10): overloaded`).
 *
 * @category Rendering
 */
export const describe = (message: SdkMessage.SdkMessage): string | undefined => {
  if (message.type !== "system") return undefined
  switch (message.subtype) {
    case "api_retry":
      return `retrying in ${seconds(message.retry_delay_ms)}${retrySuffix(message)}`
    case "notification":
      switch (message.key) {
        case "stream_stalled":
          return `no data from the API for ${seconds(message.idle_ms)}; retrying at ${seconds(message.timeout_ms)}`
        case "api_retry_wait":
          return `still waiting to retry (${seconds(message.retry_in_ms)} left)`
        case "message_retracted":
          return message.reason === "retry"
            ? "the partial answer above was cut off; asking again"
            : "the partial answer above was dropped; asking the fallback model"
        default:
          return undefined
      }
    case "status":
      return message.status === "compacting"
        ? "compacting the conversation…"
        : message.compact_result === "failed"
        ? `compaction failed: ${message.compact_error ?? "no reason given"}`
        : undefined
    case "compact_boundary":
      return `compacted the conversation (${message.compact_metadata.trigger}): ~${thousands(message.compact_metadata.pre_tokens)} → ~${
        thousands(message.compact_metadata.post_tokens)
      } tokens`
    case "permission_denied":
      return message.message
    case "informational":
      return message.content
    default:
      return undefined
  }
}
