/**
 * A run's settings: where the user's files are looked for (`HOME`, `CLAUDE_CONFIG_DIR`,
 * `KEEL_HOME`), how their `env` is applied (to `process.env` for a command-line run, over the run's
 * own environment otherwise), and the default model's order (`ANTHROPIC_MODEL`, then `model`).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { AnthropicModel } from "@keel/core"
import { ConfigProvider, Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as RunSettings from "../../src/settings/RunSettings.js"
import * as SettingsEnv from "../../src/settings/SettingsEnv.js"
import type * as SettingsLoader from "../../src/settings/SettingsLoader.js"

const withEnv = (entries: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))

const loaded = (merged: Record<string, unknown>): SettingsLoader.Loaded => ({ layers: [], merged })

const defaultModel = (merged: Record<string, unknown>, env: Record<string, string>) =>
  Effect.map(RunSettings.RunSettings, (s) => s.defaultModel).pipe(
    Effect.provide(RunSettings.layer(loaded(merged))),
    withEnv(env)
  )

describe("RunSettings", () => {
  it.effect("the default model: ANTHROPIC_MODEL, else the settings' model, else Keel's", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* defaultModel({ model: "from-settings" }, { ANTHROPIC_MODEL: "from-env" }), "from-env")
      assert.strictEqual(yield* defaultModel({ model: "from-settings" }, {}), "from-settings")
      assert.strictEqual(yield* defaultModel({}, {}), AnthropicModel.DEFAULT_MODEL)
    }))

  it.effect("the user's files: ~/.claude from HOME (or CLAUDE_CONFIG_DIR) and $KEEL_HOME; the settings' env over the run's", () =>
    Effect.gen(function*() {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "keel-run-settings-"))
      const cwd = path.join(root, "project")
      fs.mkdirSync(path.join(root, "home", ".claude"), { recursive: true })
      fs.mkdirSync(path.join(root, "claude-config"), { recursive: true })
      fs.mkdirSync(path.join(root, "keel-home"), { recursive: true })
      fs.mkdirSync(cwd, { recursive: true })
      fs.writeFileSync(path.join(root, "home", ".claude", "settings.json"), JSON.stringify({ env: { FROM: "home", A: "home" } }))
      fs.writeFileSync(path.join(root, "claude-config", "settings.json"), JSON.stringify({ env: { FROM: "claude-config" } }))
      fs.writeFileSync(path.join(root, "keel-home", "settings.json"), JSON.stringify({ env: { K: "keel" } }))
      const runEnv = { A: "run", B: "run" }
      const base = { HOME: path.join(root, "home"), KEEL_HOME: path.join(root, "keel-home") }

      const viaHome = yield* RunSettings.prepare({ cwd, env: runEnv }).pipe(withEnv(base))
      assert.deepStrictEqual(viaHome.env, { A: "home", B: "run", FROM: "home", K: "keel" })
      assert.deepStrictEqual(runEnv, { A: "run", B: "run" }, "the run's environment object is not changed")
      assert.isUndefined(process.env.FROM, "process.env is left alone when the run has an environment of its own")

      const viaConfigDir = yield* RunSettings.prepare({ cwd, env: {} }).pipe(
        withEnv({ ...base, CLAUDE_CONFIG_DIR: path.join(root, "claude-config") })
      )
      assert.deepStrictEqual(viaConfigDir.env, { FROM: "claude-config", K: "keel" })

      const none = yield* RunSettings.prepare({ cwd, env: runEnv, settingSources: [] }).pipe(withEnv(base))
      assert.deepStrictEqual(none.env, runEnv)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("SettingsEnv.apply", () => {
  it("without an environment of the run's own, the settings' env goes into process.env, over what was there", () => {
    const key = `KEEL_SETTINGS_TEST_${process.pid}`
    process.env[key] = "from-the-shell"
    try {
      assert.isUndefined(SettingsEnv.apply({ [key]: "from-settings" }, undefined))
      assert.strictEqual(process.env[key], "from-settings")
    } finally {
      delete process.env[key]
    }
  })

  it("with one, it goes over that environment and process.env is left alone", () => {
    const key = `KEEL_SETTINGS_TEST_${process.pid}`
    assert.deepStrictEqual(SettingsEnv.apply({ [key]: "s", B: "s" }, { B: "run", C: "run" }), { [key]: "s", B: "s", C: "run" })
    assert.isUndefined(process.env[key])
    assert.deepStrictEqual(SettingsEnv.apply(undefined, { C: "run" }), { C: "run" })
  })
})
