/**
 * Where settings come from, least local first, as Claude Code reads them and with Keel's own folder
 * beside Claude Code's (Keel's file comes after, so it wins where both set a value):
 * - `user`: `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`), `$KEEL_HOME/settings.json`;
 * - `project`: `.claude/settings.json`, `.keel/settings.json` in the working directory;
 * - `local`: `.claude/settings.local.json`, `.keel/settings.local.json`;
 * then `--settings` (a file or JSON text) and the flags, which always apply. `--setting-sources`
 * picks which of the three file sources are read.
 *
 * @since 0.1.0
 */
import type * as Path from "@effect/platform/Path"
import { ContextManagement } from "@keel/core"
import * as Config from "effect/Config"
import * as os from "node:os"
import * as nodePath from "node:path"

/** A source of settings files (`--setting-sources`). @category Models */
export type Source = "user" | "project" | "local"

/** Every file source, least local first (the default of `--setting-sources`). @category Constants */
export const SOURCES: ReadonlyArray<Source> = ["user", "project", "local"]

/** The user's settings folders. @category Models */
export interface Homes {
  /** `$KEEL_HOME` (default `~/.keel`). */
  readonly keel: string
  /** Claude Code's user folder: `$CLAUDE_CONFIG_DIR`, default `~/.claude`. */
  readonly claude: string
}

/** {@link Homes} from `KEEL_HOME`, `CLAUDE_CONFIG_DIR` and `HOME`. @category Configuration */
export const homesConfig: Config.Config<Homes> = Config.all({
  keel: ContextManagement.homeConfig,
  claude: Config.string("CLAUDE_CONFIG_DIR").pipe(
    Config.orElse(() => Config.map(Config.string("HOME").pipe(Config.withDefault(os.homedir())), (home) => nodePath.join(home, ".claude")))
  )
})

/** A settings file to read. @category Models */
export interface Location {
  readonly source: Source
  /** Its absolute path. */
  readonly file: string
  /** The folder relative paths in it (`additionalDirectories`) resolve against: the one holding `.claude` / `.keel`. */
  readonly root: string
}

/**
 * The settings files of `sources` (all by default), least local first.
 *
 * @category Files
 */
export const locations = (
  homes: Homes,
  cwd: string,
  path: Path.Path,
  sources: ReadonlyArray<Source> = SOURCES
): Array<Location> => {
  const at = (source: Source, file: string): Location => ({ source, file, root: path.dirname(path.dirname(file)) })
  const all: Array<Location> = [
    at("user", path.join(homes.claude, "settings.json")),
    at("user", path.join(homes.keel, "settings.json")),
    at("project", path.join(cwd, ".claude", "settings.json")),
    at("project", path.join(cwd, ".keel", "settings.json")),
    at("local", path.join(cwd, ".claude", "settings.local.json")),
    at("local", path.join(cwd, ".keel", "settings.local.json"))
  ]
  return all.filter((location) => sources.includes(location.source))
}

/**
 * How a file is named in messages: relative to the working directory when inside it
 * (`.claude/settings.json`), else its absolute path.
 *
 * @category Files
 */
export const displayName = (file: string, cwd: string, path: Path.Path): string => {
  const relative = path.relative(cwd, file)
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file
}
