/**
 * What a `keel` process does on SIGINT, SIGTERM and SIGHUP: the first one interrupts the work (the
 * running turn ends with its result, tools' process groups are killed, temporary files removed,
 * the transcript left valid, the session lock released) and the process then exits with the
 * signal's code, 128 + its number (130, 143, 129). Finishing is bounded: if it has not exited
 * {@link GRACE_MS} after the signal (by the `Clock`), it exits anyway; a second signal while it
 * finishes exits at once.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"

/** The signals handled, and the exit code each one ends the process with. @category Constants */
export const EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const

/** A handled signal. @category Models */
export type Signal = keyof typeof EXIT_CODES

/** The signals, in the order they are installed. @category Constants */
export const SIGNALS: ReadonlyArray<Signal> = ["SIGINT", "SIGTERM", "SIGHUP"]

/** How long finishing may take after a signal before the process exits anyway. @category Constants */
export const GRACE_MS = 5_000

/** @category Models */
export interface Handler {
  /** Handles one signal: the first interrupts (and arms the grace timer), a later one exits at once. */
  readonly signal: (signal: Signal) => Effect.Effect<void>
  /** The exit code of the first signal, if one came. */
  readonly code: Effect.Effect<number | undefined>
}

/**
 * A handler: `interrupt` stops the work (it may be a no-op when there is nothing to stop yet; then
 * `exit` comes when the work notices, or at the grace timer); `exit` ends the process. The grace
 * timer runs in the scope.
 *
 * @category Constructors
 */
export const make = (options: {
  readonly interrupt: (signal: Signal) => Effect.Effect<void>
  readonly exit: (code: number) => Effect.Effect<void>
  readonly graceMs?: number | undefined
}): Effect.Effect<Handler, never, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* Ref.make<number | undefined>(undefined)
    const scope = yield* Effect.scope
    return {
      code: Ref.get(first),
      signal: (signal) =>
        Effect.flatMap(Ref.getAndUpdate(first, (code) => code ?? EXIT_CODES[signal]), (before) =>
          before !== undefined
            ? options.exit(before)
            : Effect.zipRight(
              Effect.forkIn(
                Effect.zipRight(Effect.sleep(options.graceMs ?? GRACE_MS), options.exit(EXIT_CODES[signal])),
                scope
              ),
              options.interrupt(signal)
            ))
    }
  })

/**
 * Installs a handler on this process's `signals` (default all three) until `dispose`; `interrupt` as in {@link make}, the
 * exit is `process.exit`. For the entry points, which run outside Effect.
 *
 * @category Running
 */
export const install = (
  interrupt: (signal: Signal) => void,
  signals: ReadonlyArray<Signal> = SIGNALS
): { readonly code: () => number | undefined; readonly dispose: () => void } => {
  const scope = Effect.runSync(Scope.make())
  const handler = Effect.runSync(
    make({
      interrupt: (signal) => Effect.sync(() => interrupt(signal)),
      exit: (code) => Effect.sync(() => process.exit(code))
    }).pipe(Scope.extend(scope))
  )
  const listeners = signals.map((signal) => [signal, () => void Effect.runFork(handler.signal(signal))] as const)
  for (const [signal, listener] of listeners) process.on(signal, listener)
  return {
    code: () => Effect.runSync(handler.code),
    dispose: () => {
      for (const [signal, listener] of listeners) process.off(signal, listener)
      Effect.runFork(Scope.close(scope, Exit.void))
    }
  }
}
