/**
 * `Bash` (`command`, `timeout`, `description`): runs a command in a real shell through
 * `@effect/platform`'s `Command`, in its own process group. The working directory carries over
 * between calls of a session (a `cd` sticks). Output (stdout, then stderr) is capped at 30,000
 * characters with the middle cut and a note, in bounded memory while the command runs: only each
 * stream's head and tail are kept, and a stream longer than that is spilled whole to a file in
 * `ToolOutputDir` that the note names, for Read (`BoundedOutput`); a non-zero exit is an error result that reports the
 * code. The timeout is 120 s by default and 600 s at most, under `Clock`; on timeout or interruption
 * the whole process group is killed (SIGTERM, then SIGKILL after a grace period). Read-only
 * commands may run in parallel with other safe calls; a failed command cancels the calls beside it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { SessionState, Tool, ToolOutputDir } from "@keel/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as os from "node:os"
import * as BashReadOnly from "./BashReadOnly.js"
import * as BoundedOutput from "./BoundedOutput.js"
import * as Texts from "./text/Texts.generated.js"

/** Claude Code's limits. @category Constants */
export const DEFAULT_TIMEOUT_MS = 120_000
/** @category Constants */
export const MAX_TIMEOUT_MS = 600_000
/** @category Constants */
export const MAX_OUTPUT_CHARS = 30_000
/** Time between SIGTERM and SIGKILL. @category Constants */
export const KILL_GRACE = Duration.seconds(2)

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  command: Schema.String.annotations({ description: "The command to execute" }),
  timeout: Schema.optional(
    Schema.Int.pipe(Schema.between(1, MAX_TIMEOUT_MS)).annotations({ description: `Optional timeout in milliseconds (max ${MAX_TIMEOUT_MS})` })
  ),
  description: Schema.optional(Schema.String).annotations({
    description: "What the command does, in five to ten words, for the user following along"
  })
})

// Whole milliseconds with thousands separators, without Intl (whose first use costs ~30 ms of set-up,
// and this runs when the module loads).
const minutes = (ms: number): string => `${ms / 60_000} minutes (${String(ms).replace(/\B(?=(\d{3})+(?!\d))/g, ",")} ms)`

const description = Texts.Bash({
  DEFAULT_TIMEOUT: minutes(DEFAULT_TIMEOUT_MS),
  MAX_TIMEOUT: minutes(MAX_TIMEOUT_MS),
  MAX_OUTPUT_CHARS
})

/** `text` cut to `max` characters, keeping its start and end. @category Formatting */
export const capMiddle = (text: string, max = MAX_OUTPUT_CHARS): string => {
  if (text.length <= max) return text
  const half = Math.floor(max / 2)
  return `${text.slice(0, half)}\n\n[... ${text.length - 2 * half} characters cut from the middle of the output ...]\n\n${
    text.slice(-half)
  }`
}

const trimEnd = (s: string) => s.replace(/\n+$/, "")

/**
 * The text the model sees of a command's stdout and stderr (stdout first), within
 * {@link MAX_OUTPUT_CHARS} together: stderr gets up to a third when both are long; a stream cut
 * shorter than it printed is spilled whole to a file its note names. Also each alone, for the
 * structured result.
 */
const render = (
  out: BoundedOutput.Captured,
  err: BoundedOutput.Captured,
  outCollector: BoundedOutput.Collector,
  errCollector: BoundedOutput.Collector
) =>
  Effect.gen(function*() {
    let errBudget = Math.min(err.chars, out.chars > 0 ? Math.floor(MAX_OUTPUT_CHARS / 3) : MAX_OUTPUT_CHARS)
    const outBudget = Math.min(out.chars, MAX_OUTPUT_CHARS - errBudget)
    errBudget = Math.min(err.chars, MAX_OUTPUT_CHARS - outBudget)
    const spilled = (c: BoundedOutput.Captured, collector: BoundedOutput.Collector, budget: number) =>
      BoundedOutput.fits(c, budget) ? Effect.succeed(c) : collector.spill
    const o = yield* spilled(out, outCollector, Math.min(outBudget, MAX_OUTPUT_CHARS))
    const e = yield* spilled(err, errCollector, Math.min(errBudget, MAX_OUTPUT_CHARS))
    const stdout = trimEnd(BoundedOutput.render(o, MAX_OUTPUT_CHARS))
    const stderr = trimEnd(BoundedOutput.render(e, MAX_OUTPUT_CHARS))
    const output = [trimEnd(BoundedOutput.render(o, outBudget)), trimEnd(BoundedOutput.render(e, errBudget))]
      .filter((s) => s.length > 0)
      .join("\n")
    return { output, stdout, stderr }
  })

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * The structured result of a command that succeeded, in Claude Code's shape (`BashOutput`): its
 * stdout and stderr apart (each capped as the output is). A failed command's result is its error.
 *
 * @category Models
 */
export interface Result {
  readonly stdout: string
  readonly stderr: string
  readonly interrupted: boolean
  readonly isImage: boolean
  readonly noOutputExpected: boolean
}

/** Options of the Bash tool. @category Models */
export interface Options {
  /** Variables the commands see, over this process's environment (default: only this process's). */
  readonly env?: Readonly<Record<string, string>> | undefined
}

/** The Bash tool over the platform's command executor and file system, with `options`. @category Constructors */
export const makeWith = (options: Options): Effect.Effect<
  Tool.Tool<typeof Input.Type, SessionState.SessionState>,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path
> => Effect.gen(function*() {
  const context = yield* Effect.context<CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path>()
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  return Tool.make({
    name: "Bash",
    // Bounded by its own `timeout` input (default 2 minutes, at most 10), not by the generic tool timeout.
    timeoutMs: Infinity,
    description,
    input: Input,
    isReadOnly: false,
    // Read-only commands (`ls`, `git status`) run beside other safe calls; a failure cancels its siblings.
    isConcurrencySafe: (input) => BashReadOnly.isReadOnly(input.command),
    // A read-only command cut short by a crash runs again when its turn resumes; any other does not.
    isIdempotent: (input) => BashReadOnly.isReadOnly(input.command),
    cancelsSiblingsOnError: true,
    call: (input, toolContext) =>
      Effect.scoped(Effect.gen(function*() {
        const state = yield* SessionState.SessionState
        const carried = yield* Ref.get(state.shellCwd)
        const cwd = carried ?? toolContext.cwd
        const cwdFile = path.join(os.tmpdir(), `keel-cwd-${process.pid}-${toolContext.toolUseId.replace(/\W/g, "_")}`)
        const script = `${input.command}\n__keel_exit=$?\npwd -P > ${quote(cwdFile)} 2>/dev/null\nexit $__keel_exit`
        const command = Command.make("bash", "-c", script).pipe(Command.workingDirectory(cwd))
        const proc = yield* Command.start(options.env === undefined ? command : Command.env(command, options.env)).pipe(
          Effect.catchAll((e) => Tool.fail(`Could not start bash in ${cwd}: ${e.message}`))
        )
        const spillPath = (name: string) =>
          path.join(ToolOutputDir.directory, `bash-${process.pid}-${toolContext.toolUseId.replace(/\W/g, "_")}.${name}.log`)
        const trustFolder = () => ToolOutputDir.trusted() !== undefined
        const out = yield* BoundedOutput.make({ spillPath: spillPath("stdout"), trustFolder })
        const err = yield* BoundedOutput.make({ spillPath: spillPath("stderr"), trustFolder })
        const collect = (stream: Stream.Stream<Uint8Array, unknown>, into: BoundedOutput.Collector) =>
          Effect.fork(Stream.runForEach(stream, into.write).pipe(Effect.ignore))
        const readers = [yield* collect(proc.stdout, out), yield* collect(proc.stderr, err)]
        const timeoutMs = input.timeout ?? DEFAULT_TIMEOUT_MS
        const exit = yield* Effect.timeoutOption(proc.exitCode.pipe(Effect.either), Duration.millis(timeoutMs))
        if (Option.isNone(exit)) {
          yield* proc.kill("SIGTERM").pipe(
            Effect.timeout(KILL_GRACE),
            Effect.catchAll(() => Effect.ignore(proc.kill("SIGKILL")))
          )
        }
        yield* Fiber.joinAll(readers).pipe(Effect.timeout(KILL_GRACE), Effect.ignore)
        const newCwd = yield* fs.readFileString(cwdFile).pipe(Effect.option)
        yield* Effect.ignore(fs.remove(cwdFile))
        if (Option.isSome(newCwd) && newCwd.value.trim() !== "") {
          yield* Ref.set(state.shellCwd, newCwd.value.trim())
        }
        const { output, stdout, stderr } = yield* render(yield* out.end, yield* err.end, out, err)
        if (Option.isNone(exit)) {
          return yield* Tool.fail(
            `Command timed out after ${timeoutMs / 1000} s and was killed with its children.${output ? `\n${output}` : ""}`
          )
        }
        const code = exit.value._tag === "Right" ? Number(exit.value.right) : undefined
        if (code !== 0) {
          return yield* Tool.fail(`${code === undefined ? "Killed by a signal" : `Exit code ${code}`}${output ? `\n${output}` : ""}`)
        }
        const result: Result = {
          stdout,
          stderr,
          interrupted: false,
          isImage: false,
          noOutputExpected: false
        }
        return Tool.structured(output, result)
      })).pipe(Effect.provide(context))
  })
})

/** The Bash tool over the platform's command executor and file system. @category Constructors */
export const make: Effect.Effect<
  Tool.Tool<typeof Input.Type, SessionState.SessionState>,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path
> = makeWith({})
