/**
 * What git says about the working directory at the start of a session: the current branch, the
 * default branch, `git status` (cut at 2,000 characters), the recent commits and the git user.
 * Collected only inside a repository (a folder holding `.git`, from the working directory up), by
 * `git --no-optional-locks` commands run in parallel (so a session never takes the index lock an
 * editor or another git command is waiting for), each bounded by a timeout. A command that fails,
 * times out or cannot start (git missing) leaves its fact out; without `git status` there is no
 * git context at all. The commands are `SafeGit`'s: the repository's configuration cannot make them
 * run a program (fsmonitor, hooks, pagers, filter and diff drivers are overridden), and submodules'
 * work trees are not inspected (that would run git under their own configuration).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SafeGit from "../git/SafeGit.js"
import * as Texts from "./text/Texts.generated.js"

/** `git status` is cut after this many characters (Claude Code's figure). @category Constants */
export const STATUS_MAX_CHARS = 2_000

/** How many recent commits are listed. @category Constants */
export const RECENT_COMMITS = 5

/** How long each git command may take. @category Constants */
export const DEFAULT_TIMEOUT = Duration.seconds(5)

/** The git facts of a session. @category Models */
export class GitContext extends Schema.Class<GitContext>("GitContext")({
  /** The repository root: the folder holding `.git`. */
  root: Schema.String,
  /** The current branch; absent on a detached HEAD. */
  branch: Schema.optional(Schema.String),
  /** `origin`'s default branch, else `main` or `master` if one exists. */
  defaultBranch: Schema.optional(Schema.String),
  /** `git status --short`, at most {@link STATUS_MAX_CHARS} characters. */
  status: Schema.String,
  /** Whether `status` was cut. */
  statusCut: Schema.Boolean,
  /** `git log --oneline` of the last {@link RECENT_COMMITS} commits; empty before the first commit. */
  recentCommits: Schema.String,
  /** `user.name` from the git config. */
  user: Schema.optional(Schema.String)
}) {}

/** Options of {@link collect}. @category Models */
export interface Options {
  /** The most each command may take (default {@link DEFAULT_TIMEOUT}). */
  readonly timeout?: Duration.DurationInput | undefined
  /** The git executable (default `git` on the PATH). */
  readonly git?: string | undefined
}

/**
 * The repository `cwd` is in: the nearest folder from `cwd` up that holds `.git` (a directory, or
 * the file of a worktree or submodule).
 *
 * @category Constructors
 */
export const repositoryRoot = (cwd: string): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    let dir = path.resolve(cwd)
    while (true) {
      if (yield* Effect.orElseSucceed(fs.exists(path.join(dir, ".git")), () => false)) return Option.some(dir)
      const parent = path.dirname(dir)
      if (parent === dir) return Option.none()
      dir = parent
    }
  })

/** Output of one git command, read up to `limit` characters. */
interface Output {
  readonly text: string
  /** Whether there was more than `limit`. */
  readonly cut: boolean
}

/**
 * Runs one of Keel's git commands: its output (at most `limit` characters; the process is stopped
 * once that much is read), or none if it fails, exits non-zero or times out.
 */
const run = (
  command: Command.Command,
  timeout: Duration.DurationInput,
  limit = 20_000
): Effect.Effect<Option.Option<Output>, never, CommandExecutor.CommandExecutor> =>
  Effect.scoped(Effect.gen(function*() {
    const proc = yield* Command.start(command)
    // stderr is drained beside stdout, so a chatty command cannot block on a full pipe.
    yield* Effect.forkScoped(Stream.runDrain(proc.stderr))
    const text = yield* proc.stdout.pipe(
      Stream.decodeText(),
      Stream.runFoldWhile("", (s) => s.length <= limit, (s, chunk) => s + chunk)
    )
    // Cut: the rest is not read; closing the scope stops the process.
    if (text.length > limit) return Option.some<Output>({ text: text.slice(0, limit), cut: true })
    const code = yield* proc.exitCode
    return code === 0 ? Option.some<Output>({ text, cut: false }) : Option.none()
  })).pipe(
    Effect.timeoutOption(timeout),
    Effect.map(Option.flatten),
    Effect.orElseSucceed(() => Option.none<Output>())
  )

const trimmed = (output: Option.Option<Output>): string | undefined => {
  if (Option.isNone(output)) return undefined
  const text = output.value.text.trim()
  return text.length > 0 ? text : undefined
}

/**
 * The git facts of `cwd`, or none outside a repository or when git cannot tell (missing, broken,
 * too slow).
 *
 * @category Constructors
 */
export const collect = (
  cwd: string,
  options: Options = {}
): Effect.Effect<Option.Option<GitContext>, never, FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const root = yield* repositoryRoot(cwd)
    if (Option.isNone(root)) return Option.none()
    const timeout = options.timeout ?? DEFAULT_TIMEOUT
    const safe = yield* SafeGit.prepare(cwd, options.git ?? "git")
    if (Option.isNone(safe)) return Option.none()
    const git = (args: ReadonlyArray<string>, limit?: number) => run(safe.value(args), timeout, limit)
    const [branch, originHead, localDefaults, status, log, user] = yield* Effect.all([
      git(["branch", "--show-current"]),
      git(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"]),
      git(["branch", "--list", "main", "master", "--format=%(refname:short)"]),
      git(["status", "--short", "--ignore-submodules=dirty"], STATUS_MAX_CHARS),
      git(["log", "--oneline", "--no-color", "--no-show-signature", "-n", String(RECENT_COMMITS)]),
      git(["config", "--get", "user.name"])
    ], { concurrency: "unbounded" })
    if (Option.isNone(status)) return Option.none()
    const origin = trimmed(originHead)?.replace(/^origin\//, "")
    const locals = trimmed(localDefaults)?.split("\n").map((b) => b.trim()) ?? []
    const defaultBranch = origin ?? (locals.includes("main") ? "main" : locals.includes("master") ? "master" : undefined)
    const text = status.value.text
    return Option.some(
      new GitContext({
        root: root.value,
        branch: trimmed(branch),
        defaultBranch,
        // A cut status ends at its last whole line.
        status: status.value.cut ? text.slice(0, Math.max(0, text.lastIndexOf("\n"))) : text.trimEnd(),
        statusCut: status.value.cut,
        recentCommits: trimmed(log) ?? "",
        user: trimmed(user)
      })
    )
  })

/**
 * The git section of the prompt (`text/git.md`). It says that it is a snapshot from the start of the
 * session: it is not refreshed, so that the prompt (and its cached prefix) stays the same all session.
 *
 * @category Rendering
 */
export const render = (git: GitContext): string => {
  const section = Texts.git({
    branch: git.branch ?? "(detached HEAD)",
    defaultBranch: git.defaultBranch ?? "(unknown)",
    user: git.user ?? "(not set)",
    commits: git.recentCommits.length > 0 ? git.recentCommits : "(no commits yet)",
    status: git.status.length > 0 ? git.status : "(clean)"
  })
  return git.statusCut ? `${section}\n${Texts.gitStatusCut({ STATUS_MAX_CHARS })}` : section
}
