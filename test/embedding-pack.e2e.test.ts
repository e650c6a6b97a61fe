/**
 * End to end: README's "Embedding Keel in your project", as written, from outside the repository.
 * In a temporary HOME, with a fresh `~/my-project` (`npm init -y`), the section's shell block runs
 * in one `bash` from the repository root: `npm pack` of @keel/core, @keel/tools and @keel/cli, then
 * `npm install` of the tarballs and the Effect packages in the project. The README's two programs,
 * the Layer one (`## Embedding`) and the `query()` one (`### Without Effect`), are saved there as
 * `.mjs` files and run with `node` against the loopback fake API (the demo script of
 * `npm run fake-api`): each prints the answer of the Read round trip.
 *
 * npm uses this machine's cache (`npm_config_cache`, offline first), but may need the registry for
 * what the cache lacks: when the registry cannot be reached the test says so and is skipped
 * (`[needs the npm registry]`, counted by SkipReport). It takes about a minute on an idle machine
 * (most of it `npm install`), several on a loaded one.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { demo } from "./support/fake-api-cli.js"

const root = path.resolve(import.meta.dirname, "..")
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")

/** The text of README.md from `heading` to the next heading of its level or above. */
const section = (heading: string): string => {
  const start = readme.indexOf(`\n${heading}\n`)
  assert.isAtLeast(start, 0, `README.md has ${heading}`)
  const level = /^#+/.exec(heading)![0].length
  const rest = readme.slice(start + heading.length + 2)
  const end = rest.search(new RegExp(`^#{1,${level}} `, "m"))
  return end < 0 ? rest : rest.slice(0, end)
}

/** The first fenced block of `lang` in `text`. */
const firstBlock = (text: string, lang: string): string => {
  const m = new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "m").exec(text)
  assert.isNotNull(m, `a \`\`\`${lang} block`)
  return m![1]!
}

interface Run {
  readonly code: number | null
  readonly output: string
  readonly seconds: number
}

/** Runs a command to its end; its exit code, stdout and stderr interleaved, and its duration. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<Run>((resolve) => {
    const started = Date.now()
    const child = spawn(command, [...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    child.on("close", (code) => resolve({ code, output, seconds: (Date.now() - started) / 1000 }))
  })

/** npm's words for a registry it could not reach. */
const UNREACHABLE = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/

describe("README: Embedding Keel in your project", () => {
  it("packs the three packages, installs them into a fresh project, and runs the query() and Layer programs there [needs the npm registry]", {
    timeout: 900_000
  }, async (ctx) => {
    // A person's machine: a HOME of its own (the packs, the project, ~/.keel), no Anthropic or Keel
    // variables; npm's cache is this machine's, offline first.
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "keel-embed-home-"))
    const cache = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim()
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const k of Object.keys(env)) {
      if (k.startsWith("ANTHROPIC_") || k.startsWith("KEEL_") || k.startsWith("npm_")) delete env[k]
    }
    Object.assign(env, {
      HOME: home,
      CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      npm_config_cache: cache,
      npm_config_prefer_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false"
    })
    ctx.onTestFinished(() => fs.rmSync(home, { recursive: true, force: true }))
    const project = path.join(home, "my-project")
    fs.mkdirSync(project)
    assert.strictEqual((await run("npm", ["init", "-y"], project, env)).code, 0, "npm init -y")

    const steps = firstBlock(section("### Embedding Keel in your project"), "sh")
    const install = await run("bash", ["-euo", "pipefail", "-c", steps], root, env)
    console.log(`embedding-pack: npm pack and npm install took ${install.seconds.toFixed(1)} s`)
    if (install.code !== 0 && UNREACHABLE.test(install.output)) {
      console.log(`embedding-pack: NOT RUN: the npm registry cannot be reached (${UNREACHABLE.exec(install.output)![1]})`)
      ctx.skip()
    }
    assert.strictEqual(install.code, 0, `the README's steps failed:\n${install.output}`)
    // Installed from the tarballs, not linked to the repository.
    for (const name of ["core", "tools", "cli"]) {
      const installed = path.join(project, "node_modules", "@keel", name)
      assert.isFalse(fs.lstatSync(installed).isSymbolicLink(), `@keel/${name} is a copy`)
      assert.isTrue(fs.existsSync(path.join(installed, "package.json")), `@keel/${name} is installed`)
    }

    // The README's programs, as written, beside a README.md for the fake's Read.
    fs.writeFileSync(path.join(project, "layer.mjs"), firstBlock(section("## Embedding"), "ts"))
    fs.writeFileSync(path.join(project, "query.mjs"), firstBlock(section("### Without Effect: `query()`"), "ts"))
    fs.writeFileSync(path.join(project, "README.md"), "# Embedded project\n\nIt counts sheep.\n")
    const fake = await FakeAnthropic.start([], { fallback: demo })
    try {
      const api = { ...env, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "test-key" }
      const answer = "README.md summary: # Embedded project (3 lines read)"

      const query = await run("node", ["query.mjs"], project, api)
      console.log(`embedding-pack: node query.mjs took ${query.seconds.toFixed(1)} s`)
      assert.strictEqual(query.code, 0, query.output)
      // The program prints the result and its cost.
      assert.match(query.output, /^README\.md summary: # Embedded project \(3 lines read\) \d+\.\d+$/m)

      const layer = await run("node", ["layer.mjs", "read README.md and summarise it"], project, api)
      console.log(`embedding-pack: node layer.mjs took ${layer.seconds.toFixed(1)} s`)
      assert.strictEqual(layer.code, 0, layer.output)
      // The program prints each message as JSON: the Read's result, then the answer.
      const messages = layer.output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
      const texts = messages.filter((m) => m.type === "assistant").flatMap((m) => m.message.content)
        .filter((b: any) => b.type === "text").map((b: any) => b.text)
      assert.include(texts, answer)
      assert.strictEqual(messages.at(-1)?.type, "result")
      assert.strictEqual(messages.at(-1)?.subtype, "success")
    } finally {
      await fake.close()
    }
  })
})
