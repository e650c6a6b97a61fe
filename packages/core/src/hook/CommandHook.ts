/**
 * Command hooks (`{"type": "command", "command": "...", "timeout": 60}`): the command runs in
 * `bash -c` in the session's working directory, with the event's JSON input on stdin and
 * `CLAUDE_PROJECT_DIR` (and `KEEL_PROJECT_DIR`) set to it; its exit code, stdout and stderr are its
 * raw result (read by `HookOutput.read`). The process lives in the run's scope: a timeout or an
 * interruption closes it, which kills the process.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { HookInput } from "./HookEvent.js"
import type { Raw } from "./HookOutput.js"

/** Options of {@link make}. @category Models */
export interface Options {
  /** The shell command. */
  readonly command: string
  /** The environment besides the project directory (default the process's). */
  readonly env?: Readonly<Record<string, string>> | undefined
}

const collect = (stream: Stream.Stream<Uint8Array, unknown>): Effect.Effect<string> =>
  Stream.decodeText(stream).pipe(
    Stream.runFold("", (all, s) => all + s),
    Effect.orElseSucceed(() => "")
  )

/**
 * The runner of a command hook: given the event's input, its raw result once the process ends.
 * Never fails: a process that cannot start is a `Failed` result.
 *
 * @category Constructors
 */
export const make = (
  options: Options
): Effect.Effect<(input: HookInput) => Effect.Effect<Raw>, never, CommandExecutor.CommandExecutor> =>
  Effect.map(CommandExecutor.CommandExecutor, (executor) => (input) =>
    Effect.scoped(Effect.gen(function*() {
      const command = Command.make("bash", "-c", options.command).pipe(
        Command.workingDirectory(input.cwd),
        Command.env({ ...(options.env ?? {}), CLAUDE_PROJECT_DIR: input.cwd, KEEL_PROJECT_DIR: input.cwd }),
        Command.feed(JSON.stringify(input))
      )
      const proc = yield* executor.start(command)
      const [stdout, stderr, exitCode] = yield* Effect.all([collect(proc.stdout), collect(proc.stderr), proc.exitCode], {
        concurrency: "unbounded"
      })
      return { _tag: "Exited", exitCode: Number(exitCode), stdout, stderr } as Raw
    })).pipe(
      Effect.catchAll((e) => Effect.succeed<Raw>({ _tag: "Failed", message: e.message }))
    ))
