/**
 * Keel's own git commands (the start-up `git status`, `git log`, ...), run so that the repository's
 * configuration cannot make them execute a program. A repository's `.git/config` is not trusted
 * input: a downloaded project (or a model that wrote it) can set `core.fsmonitor` (run by `git
 * status`), hooks, a pager, an external diff, textconv or filter drivers (a `clean` filter runs when
 * `git status` re-reads a touched file), credential helpers, or signature checks in `git log`.
 * Every such key is overridden on the command line (`-c`, which git also hands to the git processes
 * it starts), including the filter and diff drivers the configuration names, found by reading the
 * configuration first (reading runs nothing). A driver name git could not take back on the command
 * line (one holding `=`) refuses the command. The user's identity and everything else are kept.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** Configuration that could run a program, and the value that stops it. @category Constants */
export const SAFE_CONFIG: ReadonlyArray<readonly [key: string, value: string]> = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
  ["core.sshCommand", "false"],
  ["core.askPass", ""],
  ["core.editor", "false"],
  ["sequence.editor", "false"],
  ["diff.external", ""],
  ["credential.helper", ""],
  ["log.showSignature", "false"],
  ["gpg.program", "false"],
  ["status.submoduleSummary", "false"],
  ["submodule.recurse", "false"],
  ["protocol.allow", "never"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  // A bare repository met on the way up (`x.git/` with a config of its own) is not used.
  ["safe.bareRepository", "explicit"]
]

/** The environment of Keel's git commands: no pager, no prompts, no optional locks. @category Constants */
export const SAFE_ENV: Readonly<Record<string, string>> = {
  GIT_PAGER: "cat",
  PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "false",
  SSH_ASKPASS: "false",
  GIT_OPTIONAL_LOCKS: "0"
}

/** Driver keys (`filter.<name>.clean`, `diff.<name>.textconv`, ...) whose values are programs. @category Constants */
export const DRIVER_KEYS = "^(filter\\..+\\.(clean|smudge|process)|diff\\..+\\.(command|textconv)|merge\\..+\\.driver)$"

/** How long reading the configuration may take. @category Constants */
export const CONFIG_TIMEOUT = Duration.seconds(5)

/** The `-c key=value` arguments for these overrides. @category Constructors */
export const configArgs = (pairs: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> =>
  pairs.flatMap(([key, value]) => ["-c", `${key}=${value}`])

/** The arguments before the subcommand that every Keel git command gets, without the driver overrides. */
const baseArgs: ReadonlyArray<string> = ["--no-pager", "--no-optional-locks", ...configArgs(SAFE_CONFIG)]

/** A git command with the safe arguments and environment. */
const make = (git: string, cwd: string, prefix: ReadonlyArray<string>, args: ReadonlyArray<string>): Command.Command =>
  Command.make(git, ...prefix, ...args).pipe(Command.workingDirectory(cwd), Command.env(SAFE_ENV))

/**
 * The driver keys the configuration of `cwd`'s repository sets, as `git config --null --name-only`
 * lists them; none when git cannot tell (not a repository, git missing).
 */
const driverKeys = (git: string, cwd: string): Effect.Effect<ReadonlyArray<string>, never, CommandExecutor.CommandExecutor> =>
  Command.string(make(git, cwd, baseArgs, ["config", "--null", "--name-only", "--get-regexp", DRIVER_KEYS])).pipe(
    Effect.map((out) => out.split("\0").filter((k) => k !== "")),
    Effect.timeoutOption(CONFIG_TIMEOUT),
    Effect.map(Option.getOrElse((): ReadonlyArray<string> => [])),
    Effect.orElseSucceed((): ReadonlyArray<string> => [])
  )

/** Builds Keel's git commands for one working directory. @category Models */
export type Git = (args: ReadonlyArray<string>) => Command.Command

/**
 * Keel's git for `cwd`: commands with every program-running key overridden, the repository's own
 * filter and diff drivers included. None when a driver name cannot be overridden on the command
 * line (then no git command runs).
 *
 * @category Constructors
 */
export const prepare = (
  cwd: string,
  git = "git"
): Effect.Effect<Option.Option<Git>, never, CommandExecutor.CommandExecutor> =>
  Effect.map(driverKeys(git, cwd), (keys) => {
    if (keys.some((k) => k.includes("=") || k.includes("\n"))) return Option.none()
    const prefix = [...baseArgs, ...configArgs(keys.map((k) => [k, ""] as const))]
    return Option.some((args: ReadonlyArray<string>) => make(git, cwd, prefix, args))
  })
