/**
 * End to end: the REPL's commands about the session's setup, in a real terminal against the
 * loopback fake API: `/status`, `/permissions` (list, add, remove; saved to the project's local
 * settings and in force for the next call), `/mcp`, `/memory` and `/init`.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, workdir } from "./support/KeelProcess.js"
import * as Terminal from "./support/Terminal.js"

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

const PROMPT = "› "

/** A REPL in a fresh project (or `dir`) against a fake API playing `script`. */
const repl = async (
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  options: { readonly env?: Record<string, string>; readonly dir?: string } = {}
) => {
  const server = await fake(script)
  const dir = options.dir ?? workdir()
  const home = path.join(dir, ".keel-home")
  const term = Terminal.open({ cwd: dir, env: { ...envFor(server), KEEL_HOME: home, ...options.env } })
  await term.waitFor(PROMPT)
  return { server, term, dir, home }
}

/** Types `text` and Enter. */
const enter = (term: Terminal.Terminal, text: string) => {
  term.type(text)
  term.send("Enter")
}

/** Saves the screen as `/tmp/captures/commands-<what>-<KEEL_CAPTURE>.txt` when `KEEL_CAPTURE` is set. */
const capture = (what: string, screen: string) => {
  const when = process.env.KEEL_CAPTURE
  if (when === undefined) return
  fs.mkdirSync("/tmp/captures", { recursive: true })
  fs.writeFileSync(`/tmp/captures/commands-${what}-${when}.txt`, screen)
}

describe("keel REPL commands", () => {
  it("/status shows the version, session, model, folder, API, mode, MCP servers, context and settings files", async () => {
    const dir = workdir()
    fs.mkdirSync(path.join(dir, ".keel"))
    fs.writeFileSync(path.join(dir, ".keel", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash(ls:*)"] } }))
    const { term, server } = await repl([], { dir })
    enter(term, "/status")
    const screen = await term.waitFor(/Settings[\s\S]*› $/m).catch(() => term.screen())
    capture("status", term.screen())
    assert.match(screen, /Version\s+\d+\.\d+\.\d+/)
    assert.match(screen, /Session\s+[0-9a-f-]{36}/)
    assert.match(screen, /Model\s+claude-/)
    assert.include(screen, `Folder`)
    assert.include(screen, `API  `)
    assert.include(screen, server.url)
    assert.notInclude(screen, "test-key")
    assert.match(screen, /Permission mode\s+default/)
    assert.match(screen, /MCP servers\s+none/)
    assert.match(screen, /Context\s+[\d,]+ \/ 200,000 tokens/)
    assert.include(screen, ".keel/settings.json")
  })

  it("/permissions lists the rules with their files and the mode", async () => {
    const dir = workdir()
    fs.mkdirSync(path.join(dir, ".keel"))
    fs.writeFileSync(
      path.join(dir, ".keel", "settings.json"),
      JSON.stringify({ permissions: { allow: ["Bash(ls:*)"], deny: ["Read(./.env)"] } })
    )
    const { term } = await repl([], { dir })
    enter(term, "/permissions")
    const screen = await term.waitFor(/Bash\(ls:\*\)[\s\S]*› $/m).catch(() => term.screen())
    capture("permissions", term.screen())
    assert.match(screen, /Mode: default/)
    assert.match(screen, /Allow[\s\S]*Bash\(ls:\*\)\s+\.keel\/settings\.json/)
    assert.match(screen, /Deny[\s\S]*Read\(\.\/\.env\)\s+\.keel\/settings\.json/)
  })
})
