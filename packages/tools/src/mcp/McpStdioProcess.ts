/**
 * The child process of a stdio MCP server: the SDK's stdio transport told to report the pid it
 * spawns and when that process exits, a registry of live servers killed by an exit hook if the
 * process exits without closing them (so none is orphaned), and the stop sequence (stdin ended,
 * then SIGTERM, then SIGKILL, with grace periods on Effect's Clock).
 *
 * @since 0.1.0
 */
import type { ChildProcess } from "node:child_process"
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

// Stdio servers alive now, killed if the process exits without closing them.
const alive = new Set<number>()
let exitHook = false
const killAlive = () => {
  for (const pid of alive) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
}
/** Registers a live server's pid, to be killed if the process exits without closing it. @category Lifecycle */
export const track = (pid: number) => {
  if (!exitHook) {
    process.on("exit", killAlive)
    exitHook = true
  }
  alive.add(pid)
}

/**
 * The SDK's stdio transport, telling us the pid of the process it spawns as soon as it runs, and
 * when that process has exited (the SDK's `close` returns early when another close is under way).
 */
export class TrackedStdioTransport extends StdioClientTransport {
  /** Settles when the process has exited (at once if it never started). */
  exited: Promise<void> = Promise.resolve()
  constructor(params: StdioServerParameters, private readonly onSpawn: (pid: number) => void) {
    super(params)
  }
  override async start(): Promise<void> {
    const started = super.start()
    // `super.start()` spawns synchronously; the child is the SDK's private `_process`.
    const child = (this as unknown as { _process?: ChildProcess })._process
    if (child !== undefined) {
      this.exited = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.once("error", () => resolve())
      })
    }
    await started
    if (this.pid !== null) this.onSpawn(this.pid)
  }
}

/** Time a stdio server gets to exit after its stdin ends, then after SIGTERM, before SIGKILL. @category Constants */
export const STOP_GRACE_MS = { afterStdinEnd: 500, afterSigterm: 1_500 } as const

/**
 * Ends a stdio server faster than the SDK's own close would (2 s, then 2 s): the SDK ends its stdin,
 * and a server that has not exited gets SIGTERM after {@link STOP_GRACE_MS}, then SIGKILL. The
 * grace periods run on Effect's Clock.
 */
export const stop = (transport: TrackedStdioTransport, pid: number | undefined): Effect.Effect<void> =>
  Effect.gen(function*() {
    const exited = Effect.promise(() => transport.exited)
    const exitedWithin = (ms: number) =>
      Effect.map(Effect.timeoutOption(exited, Duration.millis(ms)), (o) => o._tag === "Some")
    const signal = (name: NodeJS.Signals) =>
      Effect.sync(() => {
        try {
          if (pid !== undefined) process.kill(pid, name)
        } catch {
          // already gone
        }
      })
    if (yield* exitedWithin(STOP_GRACE_MS.afterStdinEnd)) return
    yield* signal("SIGTERM")
    if (yield* exitedWithin(STOP_GRACE_MS.afterSigterm)) return
    yield* signal("SIGKILL")
    yield* exited
  })

/** Forgets a server's pid once its process has exited or been stopped. @category Lifecycle */
export const untrack = (pid: number): void => {
  alive.delete(pid)
}
