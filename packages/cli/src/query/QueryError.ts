/**
 * The error of `query()`: the options, or a failure before or outside a turn.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Why a query could not run: an option Keel does not support or a value it cannot use (`code` 2),
 * or a failure before or outside a turn (`code` 1, 2 or 3, as `keel`'s exit code; 3: the session
 * is in use by another writer): the message is the line `keel` would print, e.g. that
 * `ANTHROPIC_API_KEY` is not set.
 *
 * @category Errors
 */
export class QueryError extends Schema.TaggedError<QueryError>("@keel/cli/QueryError")("QueryError", {
  message: Schema.String,
  code: Schema.Literal(1, 2, 3)
}) {}

