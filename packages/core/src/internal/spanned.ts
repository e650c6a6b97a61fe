/**
 * A stream as a span, without putting the span in the stream's context.
 *
 * `Stream.withSpan` provides its span to the stream, and a stream that is provided a context pays a
 * context merge for every effect it runs: on a model call that is most of the turn loop's own cost.
 * Here the span's parent is given, and whatever needs the span as a parent is given it too.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as CheapStream from "./cheapStream.js"
import type * as Tracer from "effect/Tracer"

/** Options of {@link spanned}. @internal */
export interface Options {
  /** The parent span (default: the one in context where the stream starts). */
  readonly parent?: Tracer.AnySpan | undefined
  readonly attributes?: Record<string, unknown> | undefined
  /** Called as the stream ends, before the span does: what the span records of the stream's work. */
  readonly onEnd?: ((span: Tracer.Span) => void) | undefined
}

/**
 * The stream `f` makes from a new span named `name`: the span starts when the stream starts and
 * ends, with the stream's exit, when it ends (finished, failed or interrupted).
 *
 * @internal
 */
export const spanned = <A, E, R>(
  name: string,
  options: Options,
  f: (span: Tracer.Span) => Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> =>
  CheapStream.unwrap(Effect.map(
    Effect.makeSpan(name, {
      captureStackTrace: false,
      ...(options.parent !== undefined ? { parent: options.parent } : {}),
      ...(options.attributes !== undefined ? { attributes: options.attributes } : {})
    }),
    (span) =>
      f(span).pipe(Stream.ensuringWith((exit) =>
        Effect.flatMap(Clock.currentTimeNanos, (now) =>
          Effect.sync(() => {
            options.onEnd?.(span)
            span.end(now, exit)
          }))
      ))
  ))
