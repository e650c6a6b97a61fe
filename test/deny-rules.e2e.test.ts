/**
 * End to end (issue 16, items 2 and 3): with `Read(./.env)` denied, the real `keel` binary never
 * sends the secret, nor the denied file's name from a search, to the API, however the model asks for
 * it (a symlink, `..`, an absolute path, Grep over the workspace or on the file, Glob, an @mention),
 * with ripgrep and with the built-in search; and Glob never lists a file outside the workspace.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** `top/w` the workspace (`.env` holds the secret, `link -> .env`, `envdir -> .`, `out -> ../outside`); `top/outside/leak.txt`. */
const fixture = () => {
  const top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-deny-e2e-")))
  const w = path.join(top, "w")
  fs.mkdirSync(path.join(w, "src"), { recursive: true })
  fs.mkdirSync(path.join(top, "outside"))
  fs.writeFileSync(path.join(w, ".env"), "API_TOKEN=hunter2-secret\n")
  fs.writeFileSync(path.join(w, "src", "app.ts"), "const token = lookup(\"API_TOKEN\")\n")
  fs.writeFileSync(path.join(top, "outside", "leak.txt"), "OUTSIDE_MARKER\n")
  fs.symlinkSync(".env", path.join(w, "link"))
  fs.symlinkSync(".", path.join(w, "envdir"))
  fs.symlinkSync("../outside", path.join(w, "out"))
  fs.symlinkSync("../outside/leak.txt", path.join(w, "toleak"))
  return { top, w }
}

/** Runs `keel -p prompt` in `cwd` against a model that makes `calls` at once, then says done. */
const keel = async (
  cwd: string,
  prompt: string,
  calls: ReadonlyArray<{ readonly name: string; readonly input: unknown }>,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
) => {
  const server = await fake([
    FakeAnthropic.toolUseReply(calls.map((c, i) => ({ ...c, id: `toolu_${i}` }))),
    FakeAnthropic.textReply("done")
  ])
  const r = await run(["-p", prompt, "--output-format", "stream-json", ...args], {
    env: { ...envFor(server), KEEL_HOME: path.join(cwd, "..", ".keel-home"), ...env },
    cwd
  })
  return { ...r, server, messages: r.code === 2 ? [] : lines(r.stdout) }
}

/** Every way the model might reach `.env`'s contents or name. */
const probes = (w: string) => [
  { name: "Read", input: { file_path: "link" } },
  { name: "Read", input: { file_path: "./src/../.env" } },
  { name: "Read", input: { file_path: ".//.env" } },
  { name: "Read", input: { file_path: "envdir/link" } },
  { name: "Read", input: { file_path: path.join(w, ".env") } },
  { name: "Grep", input: { pattern: "hunt.r2", output_mode: "content" } },
  { name: "Grep", input: { pattern: "API_TOKEN", output_mode: "content", "-C": 2 } },
  { name: "Grep", input: { pattern: "API_TOKEN" } },
  { name: "Grep", input: { pattern: "API_TOKEN", output_mode: "count" } },
  { name: "Grep", input: { pattern: ".", path: ".env", output_mode: "content" } },
  { name: "Grep", input: { pattern: ".", path: "link", output_mode: "content" } },
  { name: "Grep", input: { pattern: "TOKEN", path: "envdir", output_mode: "content" } },
  { name: "Glob", input: { pattern: "**/*" } },
  { name: "Glob", input: { pattern: ".env*" } },
  { name: "Glob", input: { pattern: "envdir/*" } }
]

describe("keel: Read deny rules do not leak", () => {
  for (const [search, env] of [["ripgrep", {}], ["the built-in search", { KEEL_USE_BUILTIN_GREP: "1" }]] as const) {
    it(`--disallowedTools 'Read(./.env)': no request carries the secret or the file's name (${search})`, async () => {
      const { w } = fixture()
      const t = await keel(w, "look at @.env and @link and @src/../.env", probes(w), ["--disallowedTools", "Read(./.env)"], env)
      assert.strictEqual(t.code, 0, t.stderr)
      assert.strictEqual(t.server.requests.length, 2)
      for (const request of t.server.requests) assert.notInclude(JSON.stringify(request.body), "hunter2")
      // The @mentions were left as text: the first request carries the prompt alone.
      assert.strictEqual(JSON.stringify(t.server.requests[0]!.body.messages[0].content).includes("Called the Read tool"), false)
      // The searches that ran name neither the file nor the link to it, and still find the public file.
      const answers = t.server.requests[1]!.body.messages.at(-1).content as Array<any>
      const ran = ["toolu_5", "toolu_6", "toolu_7", "toolu_8", "toolu_11", "toolu_12", "toolu_13", "toolu_14"]
      for (const id of ran) {
        const content = JSON.stringify(answers.find((b) => b.tool_use_id === id).content)
        assert.notInclude(content, ".env", id)
        assert.notInclude(content, "link", id)
      }
      assert.include(JSON.stringify(answers), "src/app.ts")
      // The denied calls: the five Reads and the Greps on the file itself (by name or link), Glob of `.env*` is an empty list.
      const denials = t.messages.at(-1).permission_denials.map((d: any) => d.tool_use_id)
      assert.includeMembers(denials, ["toolu_0", "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_9", "toolu_10"])
      assert.include(answers.find((b) => b.tool_use_id === "toolu_13").content, "No files found")
    })
  }

  it("a deny rule in .keel/settings.json is honoured the same way", async () => {
    const { w } = fixture()
    fs.mkdirSync(path.join(w, ".keel"))
    fs.writeFileSync(path.join(w, ".keel", "settings.json"), JSON.stringify({ permissions: { deny: ["Read(./.env)"] } }))
    const t = await keel(w, "go", probes(w), [])
    assert.strictEqual(t.code, 0, t.stderr)
    for (const request of t.server.requests) assert.notInclude(JSON.stringify(request.body), "hunter2")
  })
})

describe("keel: Glob stays inside the workspace", () => {
  it("../outside/*, /etc/*, **/../../*, a symlinked folder, a link to a file outside: no outside name reaches the model", async () => {
    const { top, w } = fixture()
    const calls = [
      { name: "Glob", input: { pattern: "../outside/*" } },
      { name: "Glob", input: { pattern: "/etc/*" } },
      { name: "Glob", input: { pattern: "**/../../*" } },
      { name: "Glob", input: { pattern: "**/../../outside/*" } },
      { name: "Glob", input: { pattern: "out/*" } },
      { name: "Glob", input: { pattern: "*", path: "out" } },
      { name: "Glob", input: { pattern: "toleak" } },
      { name: "Glob", input: { pattern: "{..,src}/*/*" } },
      { name: "Grep", input: { pattern: "OUTSIDE_MARKER", output_mode: "content" } },
      { name: "Grep", input: { pattern: "OUTSIDE_MARKER", path: "out", output_mode: "content" } }
    ]
    for (const env of [{}, { KEEL_USE_BUILTIN_GREP: "1" }]) {
      const t = await keel(w, "go", calls, [], env)
      assert.strictEqual(t.code, 0, t.stderr)
      const results = JSON.stringify(t.server.requests[1]!.body.messages.at(-1))
      assert.notInclude(results, "leak.txt")
      assert.notInclude(results, "OUTSIDE_MARKER\\n")
      assert.notInclude(results, "passwd")
      assert.notInclude(results, path.join(top, "outside"))
      // The calls whose fixed prefix leaves the workspace were asked about, and headless denied.
      const denials = t.messages.at(-1).permission_denials.map((d: any) => d.tool_use_id)
      assert.includeMembers(denials, ["toolu_0", "toolu_1", "toolu_4", "toolu_5", "toolu_9"])
    }
  })
})
