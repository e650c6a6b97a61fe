/**
 * The settings loader on real files: each source (user under `~/.claude` and `$KEEL_HOME`, project
 * and local under `.claude/` and `.keel/`), the order they merge in, `--setting-sources`,
 * `--settings` as a path and as JSON, unknown keys kept, and the message of each invalid value.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Settings from "../../src/Settings.js"
import * as SettingsLoader from "../../src/settings/SettingsLoader.js"
import type { Source } from "../../src/settings/SettingsSources.js"

/** A fresh project, Keel home and Claude home, with `files` (paths relative to the project; `~/` = the user's home). */
const setup = (files: Record<string, unknown>) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "keel-settings-"))
  const cwd = path.join(root, "project")
  const homes = { keel: path.join(root, "home", ".keel"), claude: path.join(root, "home", ".claude") }
  for (const [file, content] of Object.entries(files)) {
    const target = file.startsWith("~/") ? path.join(root, "home", file.slice(2)) : path.join(cwd, file)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, typeof content === "string" ? content : JSON.stringify(content))
  }
  fs.mkdirSync(cwd, { recursive: true })
  return { cwd, homes, root }
}

const load = (
  files: Record<string, unknown>,
  options: { readonly sources?: ReadonlyArray<Source>; readonly flag?: string } = {}
) => {
  const { cwd, homes, root } = setup(files)
  return SettingsLoader.load({ cwd, homes, ...options }).pipe(
    Effect.map((loaded) => ({ loaded, cwd, root })),
    Effect.provide(NodeContext.layer)
  )
}

const failure = (files: Record<string, unknown>, options: { readonly flag?: string } = {}) =>
  Effect.map(Effect.flip(load(files, options)), (e) => {
    assert.strictEqual(e._tag, "InvalidSettings")
    return e.message
  })

describe("settings sources", () => {
  it.effect("reads each source's files; a value of a more local file wins, Keel's file over Claude Code's", () =>
    Effect.gen(function*() {
      const { loaded } = yield* load({
        "~/.claude/settings.json": { model: "user-claude", env: { A: "user-claude", B: "user-claude" } },
        "~/.keel/settings.json": { env: { B: "user-keel" } },
        ".claude/settings.json": { model: "project-claude", env: { C: "project-claude" } },
        ".keel/settings.json": { model: "project-keel" },
        ".claude/settings.local.json": { env: { D: "local-claude" } },
        ".keel/settings.local.json": { env: { D: "local-keel" } }
      })
      assert.deepStrictEqual(loaded.layers.map((l) => [l.origin, l.name.endsWith("settings.json") ? "json" : "local"]), [
        ["user", "json"],
        ["user", "json"],
        ["project", "json"],
        ["project", "json"],
        ["local", "local"],
        ["local", "local"]
      ])
      assert.strictEqual(loaded.merged.model, "project-keel")
      assert.deepStrictEqual(loaded.merged.env, { A: "user-claude", B: "user-keel", C: "project-claude", D: "local-keel" })
    }))

  it.effect("permission rules of every source add up (each once), the most local defaultMode wins", () =>
    Effect.gen(function*() {
      const { cwd, loaded } = yield* load({
        "~/.claude/settings.json": { permissions: { allow: ["Read"], deny: ["Bash(rm:*)"], defaultMode: "plan" } },
        ".claude/settings.json": { permissions: { allow: ["Read", "Bash(git status:*)"], ask: ["Write"] } },
        ".keel/settings.local.json": { permissions: { defaultMode: "acceptEdits" } }
      })
      assert.deepStrictEqual(loaded.merged.permissions, {
        allow: ["Read", "Bash(git status:*)"],
        deny: ["Bash(rm:*)"],
        defaultMode: "acceptEdits",
        ask: ["Write"]
      })
      const config = yield* Settings.permissions(
        { allowedTools: ["Edit"], disallowedTools: ["Bash(curl:*)"], permissionMode: undefined, addDirs: [] },
        loaded,
        cwd
      )
      assert.strictEqual(config.mode, "acceptEdits")
      assert.deepStrictEqual(config.allow.map((r) => r.toolName), ["Read", "Bash", "Edit"])
      assert.deepStrictEqual(config.deny.map((r) => r.toolName), ["Bash", "Bash"])
      assert.deepStrictEqual(config.ask.map((r) => r.toolName), ["Write"])
      assert.isUndefined(config.bypassAvailable)
    }))

  it.effect("--setting-sources reads only the sources it names; none for an empty list", () =>
    Effect.gen(function*() {
      const files = {
        "~/.claude/settings.json": { env: { U: "1" } },
        ".claude/settings.json": { env: { P: "1" } },
        ".claude/settings.local.json": { env: { L: "1" } }
      }
      assert.deepStrictEqual((yield* load(files, { sources: ["project"] })).loaded.merged.env, { P: "1" })
      assert.deepStrictEqual((yield* load(files, { sources: ["user", "local"] })).loaded.merged.env, { U: "1", L: "1" })
      assert.deepStrictEqual((yield* load(files, { sources: [] })).loaded, { layers: [], merged: {} })
    }))

  it.effect("--settings as JSON text, and as a file's path (relative to the working directory), comes after the files", () =>
    Effect.gen(function*() {
      const files = { ".keel/settings.local.json": { model: "local", env: { A: "local" } }, "extra.json": { model: "from-file" } }
      const json = yield* load(files, { flag: "{\"model\": \"from-json\", \"env\": {\"B\": \"flag\"}}", sources: ["local"] })
      assert.strictEqual(json.loaded.merged.model, "from-json")
      assert.deepStrictEqual(json.loaded.merged.env, { A: "local", B: "flag" })
      assert.deepStrictEqual(json.loaded.layers.map((l) => [l.origin, l.name]), [["local", ".keel/settings.local.json"], ["flag", "--settings"]])
      const file = yield* load(files, { flag: "extra.json" })
      assert.strictEqual(file.loaded.merged.model, "from-file")
      assert.strictEqual(file.loaded.layers.at(-1)!.name, "--settings extra.json")
      // --settings applies even when no file source is read.
      assert.strictEqual((yield* load(files, { flag: "extra.json", sources: [] })).loaded.merged.model, "from-file")
    }))

  it.effect("unknown keys (hooks among them) are kept and ignored, at the top and under permissions", () =>
    Effect.gen(function*() {
      const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }] }
      const { loaded } = yield* load({
        ".claude/settings.json": { hooks, includeCoAuthoredBy: false, permissions: { allow: ["Read"], disableBypassPermissionsMode: "disable" } }
      })
      assert.deepStrictEqual(loaded.merged as unknown, {
        hooks,
        includeCoAuthoredBy: false,
        permissions: { allow: ["Read"], disableBypassPermissionsMode: "disable" }
      })
    }))

  it.effect("additionalDirectories, top-level and under permissions, resolve against the file's project; --add-dir against the cwd", () =>
    Effect.gen(function*() {
      const { cwd, loaded, root } = yield* load({
        ".claude/settings.json": { additionalDirectories: ["../shared"], permissions: { additionalDirectories: ["/abs/dir"] } }
      })
      const config = yield* Settings.permissions(
        { allowedTools: [], disallowedTools: [], permissionMode: "default", addDirs: ["sub"], allowDangerouslySkipPermissions: true },
        loaded,
        cwd
      )
      assert.deepStrictEqual(config.additionalDirectories, ["/abs/dir", path.join(root, "shared"), path.join(cwd, "sub")])
      assert.isTrue(config.bypassAvailable)
      assert.strictEqual(config.mode, "default")
    }))

  it.effect("a file that does not exist is skipped; no files at all is no settings", () =>
    Effect.gen(function*() {
      const { loaded } = yield* load({})
      assert.deepStrictEqual(loaded, { layers: [], merged: {} })
    }))
})

describe("invalid settings stop the run, naming the file and the key", () => {
  it.effect("each invalid value of each key", () =>
    Effect.gen(function*() {
      const cases: Array<[unknown, string]> = [
        [{ env: { FOO: 1 } }, ".claude/settings.json: env.FOO must be a string"],
        [{ env: ["A=1"] }, ".claude/settings.json: env must be an object of strings"],
        [{ model: 42 }, ".claude/settings.json: model must be a model name (a non-empty string)"],
        [{ model: " " }, ".claude/settings.json: model must be a model name (a non-empty string)"],
        [{ apiKeyHelper: true }, ".claude/settings.json: apiKeyHelper must be a shell command (a non-empty string)"],
        [{ additionalDirectories: "dir" }, ".claude/settings.json: additionalDirectories must be an array of strings"],
        [{ permissions: [] }, ".claude/settings.json: permissions must be an object"],
        [{ permissions: { allow: "Bash" } }, ".claude/settings.json: permissions.allow must be an array of strings"],
        [{ permissions: { deny: ["Read", 7] } }, ".claude/settings.json: permissions.deny[1] must be a string"],
        [
          { permissions: { defaultMode: "yolo" } },
          ".claude/settings.json: permissions.defaultMode must be one of default, acceptEdits, bypassPermissions, plan, dontAsk"
        ],
        [[1], ".claude/settings.json: the settings must be an object"],
        [{ env: { A: 1 }, model: false }, ".claude/settings.json: env.A must be a string; model must be a model name (a non-empty string)"]
      ]
      for (const [content, message] of cases) {
        assert.strictEqual(yield* failure({ ".claude/settings.json": content }), message, JSON.stringify(content))
      }
    }))

  it.effect("a file that is not JSON names the file; a user file is named by its full path", () =>
    Effect.gen(function*() {
      assert.match(yield* failure({ ".keel/settings.local.json": "{ \"model\": " }), /^\.keel\/settings\.local\.json is not valid JSON \(.+\); fix it or remove it\.$/)
      const message = yield* failure({ "~/.claude/settings.json": { env: { X: null } } })
      assert.match(message, /^\/.+\/home\/\.claude\/settings\.json: env\.X must be a string$/)
    }))

  it.effect("--settings: invalid JSON text, an invalid value, a file that is not there", () =>
    Effect.gen(function*() {
      assert.match(yield* failure({}, { flag: "{not json" }), /^--settings is not valid JSON/)
      assert.strictEqual(yield* failure({}, { flag: "{\"env\": {\"A\": 1}}" }), "--settings: env.A must be a string")
      assert.match(yield* failure({}, { flag: "missing.json" }), /^--settings missing\.json: no such file \(.+missing\.json\); give a settings file's path or its JSON text\.$/)
      assert.strictEqual(yield* failure({ "s.json": { model: 1 } }, { flag: "s.json" }), "--settings s.json: model must be a model name (a non-empty string)")
    }))

  it.effect("a permission rule that does not parse names the file it is in", () =>
    Effect.gen(function*() {
      const { cwd, loaded } = yield* load({ ".keel/settings.json": { permissions: { allow: ["Bash(unclosed"] } } })
      const error = yield* Effect.flip(Settings.permissions(
        { allowedTools: [], disallowedTools: [], permissionMode: undefined, addDirs: [] },
        loaded,
        cwd
      ))
      assert.match(error.message, /^\.keel\/settings\.json: not a permission rule: "Bash\(unclosed" \(write Tool or Tool\(content\)/)
    }))
})
