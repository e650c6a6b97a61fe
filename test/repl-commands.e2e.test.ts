/**
 * End to end: the REPL's commands about the session's setup, in a real terminal against the
 * loopback fake API: `/status`, `/permissions` (list, add, remove; saved to the project's local
 * settings and in force for the next call), `/mcp`, `/memory` and `/init`.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, workdir } from "./support/KeelProcess.js"
import { enter, repl } from "./support/Repl.js"
import * as Terminal from "./support/Terminal.js"

const testServer = path.resolve(import.meta.dirname, "support", "mcp-test-server.mjs")

/** A settings file's JSON. */
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"))

/** The text blocks of a request's last user message, joined. */
const lastUserText = (server: FakeAnthropic.FakeAnthropic, index: number): string => {
  const content = server.requests[index]!.body.messages.at(-1).content
  return typeof content === "string" ? content : content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("\n")
}

afterEach(async () => {
  Terminal.closeTerminals()
  await closeServers()
})

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
    fs.mkdirSync(path.join(dir, ".claude"))
    fs.writeFileSync(path.join(dir, ".claude", "settings.json"), JSON.stringify({ permissions: { ask: ["WebFetch"] } }))
    const { term } = await repl([], { dir, args: ["--allowedTools", "Grep"] })
    enter(term, "/permissions")
    const screen = await term.waitFor(/Bash\(ls:\*\)[\s\S]*› $/m).catch(() => term.screen())
    capture("permissions", term.screen())
    assert.match(screen, /Mode: default/)
    assert.match(screen, /Allow[\s\S]*Bash\(ls:\*\)\s+\.keel\/settings\.json/)
    assert.match(screen, /Deny[\s\S]*Read\(\.\/\.env\)\s+\.keel\/settings\.json/)
    assert.match(screen, /Ask\n\s+WebFetch\s+\.claude\/settings\.json/)
    assert.match(screen, /Grep\s+--allowedTools/)
    assert.match(screen, /Workspace: \/\S+keel-e2e-\S+ \(file tools use these without asking\)/)
    enter(term, "/permissions remove WebFetch")
    await term.waitFor("Removed WebFetch for this session. It is also in .claude/settings.json, which Keel does not edit")
  })

  it("/permissions allow saves the rule to .keel/settings.local.json and the next call runs without asking", async () => {
    const { dir, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch made.txt", description: "Make a file" } }]),
      FakeAnthropic.textReply("Made it.")
    ])
    enter(term, "/permissions allow Bash(touch made.txt)")
    await term.waitFor("Added allow rule Bash(touch made.txt) in .keel/settings.local.json")
    assert.deepStrictEqual(readJson(path.join(dir, ".keel", "settings.local.json")), { permissions: { allow: ["Bash(touch made.txt)"] } })
    enter(term, "make the file")
    const screen = await term.waitFor("Made it.")
    assert.notInclude(screen, "Allow Bash(touch made.txt)?", "not asked: the rule is in force")
    assert.isTrue(fs.existsSync(path.join(dir, "made.txt")))
    enter(term, "/permissions")
    await term.waitFor(/Bash\(touch made\.txt\)\s+\.keel\/settings\.local\.json/)
  })

  it("/permissions deny is in force for the next call; --project saves to .keel/settings.json", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, ".env"), "SECRET=1\n")
    const { server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: path.join(dir, ".env") } }]),
      FakeAnthropic.textReply("Could not read it.")
    ], { dir })
    enter(term, "/permissions deny --project Read(./.env)")
    await term.waitFor("Added deny rule Read(./.env) in .keel/settings.json")
    assert.deepStrictEqual(readJson(path.join(dir, ".keel", "settings.json")), { permissions: { deny: ["Read(./.env)"] } })
    enter(term, "read .env")
    await term.waitFor("Could not read it.")
    const result = server.requests[1]!.body.messages.at(-1).content.find((b: any) => b.type === "tool_result")
    assert.isTrue(result.is_error)
    assert.include(JSON.stringify(result.content), "Read(./.env)")
    assert.notInclude(JSON.stringify(result.content), "SECRET")
  })

  it("/permissions with an invalid rule says so and saves nothing; remove takes a rule out of its file", async () => {
    const dir = workdir()
    fs.mkdirSync(path.join(dir, ".keel"))
    fs.writeFileSync(path.join(dir, ".keel", "settings.json"), JSON.stringify({ model: "claude-sonnet-4-6", permissions: { allow: ["Bash(ls:*)"] } }))
    const { term } = await repl([], { dir })
    enter(term, "/permissions allow Bash(npm test:*")
    await term.waitFor(`Not a permission rule: "Bash(npm test:*". A rule reads Tool or Tool(content)`)
    await term.waitFor("Nothing was saved.")
    assert.isFalse(fs.existsSync(path.join(dir, ".keel", "settings.local.json")))
    enter(term, "/permissions remove Bash(ls:*)")
    await term.waitFor("Removed Bash(ls:*) from .keel/settings.json.")
    assert.deepStrictEqual(readJson(path.join(dir, ".keel", "settings.json")), { model: "claude-sonnet-4-6", permissions: { allow: [] } })
    enter(term, "/permissions remove Bash(ls:*)")
    await term.waitFor("No rule Bash(ls:*) is in force")
    enter(term, "/permissions")
    const screen = await term.waitFor(/Allow\n\s+\(none\)/)
    assert.notMatch(screen.slice(screen.lastIndexOf("Mode:")), /Bash\(ls:\*\)\s+\.keel/)
  })

  it("/mcp shows each server with its status, the error of one that failed, and the tools of one connected", async () => {
    const config = JSON.stringify({
      mcpServers: {
        tester: { command: process.execPath, args: [testServer] },
        broken: { command: "/nonexistent/mcp-server" }
      }
    })
    const { term } = await repl([], { args: ["--mcp-config", config] })
    enter(term, "/mcp")
    const screen = await term.waitFor(/broken\s+✘ failed: .+/)
    capture("mcp", term.screen())
    assert.match(screen, /MCP servers \(2\)/)
    assert.match(screen, /tester\s+✔ connected/)
    assert.match(screen, /\d+ tools: .*mcp__tester__echo/)
    enter(term, "/status")
    await term.waitFor(/MCP servers\s+1 connected, 1 failed \(broken\)/)
  })

  it("/memory lists the instruction files with their sizes and opens one in $EDITOR, or prints its path", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, "AGENTS.md"), "# Agents\n\nRun npm test.\n")
    const editor = path.join(dir, "editor.sh")
    fs.writeFileSync(editor, "#!/bin/sh\necho 'Edited by the editor.' >> \"$1\"\n", { mode: 0o755 })
    const { term } = await repl([], { dir, env: { EDITOR: editor } })
    enter(term, "/memory")
    const screen = await term.waitFor(/1\. AGENTS\.md\s+project · 24 chars/)
    capture("memory", screen)
    assert.include(screen, `Project instructions: AGENTS.md (/memory project) · yours, for every project: ${path.join(dir, ".keel-home", "KEEL.md")}`)
    enter(term, "/memory 1")
    await term.waitFor(`Edited AGENTS.md with ${editor}.`)
    assert.include(fs.readFileSync(path.join(dir, "AGENTS.md"), "utf8"), "Edited by the editor.")
    enter(term, "/memory 7")
    await term.waitFor("No instruction file 7: /memory lists 1 to 1.")
    enter(term, "/memory user")
    await term.waitFor(`Edited .keel-home/KEEL.md with ${editor}.`)
    assert.strictEqual(fs.readFileSync(path.join(dir, ".keel-home", "KEEL.md"), "utf8"), "Edited by the editor.\n")
  })

  it("/memory without $EDITOR prints the file's path", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, "CLAUDE.md"), "Be brief.\n")
    const { term } = await repl([], { dir, env: { EDITOR: "", VISUAL: "" } })
    enter(term, "/memory 1")
    await term.waitFor(`${fs.realpathSync(dir)}/CLAUDE.md`)
    await term.waitFor("Set $EDITOR (or $VISUAL) to open it from here")
  })

  it("/init runs a turn that tells the model to study the repository and write AGENTS.md, which it writes with Write", async () => {
    const dir = workdir()
    const agents = path.join(fs.realpathSync(dir), "AGENTS.md")
    const { server, term } = await repl([
      FakeAnthropic.toolUseReply([{ name: "Glob", input: { pattern: "**/*" } }]),
      FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: agents, content: "# AGENTS.md\n\nA demo that counts sheep.\n" } }]),
      FakeAnthropic.textReply("Wrote AGENTS.md.")
    ], { dir, args: ["--permission-mode", "acceptEdits"] })
    enter(term, "/init")
    const screen = await term.waitFor("Wrote AGENTS.md.")
    capture("init", screen)
    const asked = lastUserText(server, 0)
    assert.include(asked, "<command-name>/init</command-name>")
    assert.include(asked, "Study this repository and write AGENTS.md")
    assert.include(asked, "Create AGENTS.md at the root of the working directory with the Write tool")
    assert.includeMembers(server.requests[0]!.body.tools.map((t: any) => t.name), ["Read", "Glob", "Grep", "Write"])
    const written = server.requests[2]!.body.messages.at(-1).content.find((b: any) => b.type === "tool_result")
    assert.isNotTrue(written.is_error)
    assert.strictEqual(fs.readFileSync(agents, "utf8"), "# AGENTS.md\n\nA demo that counts sheep.\n")
    assert.match(screen, /Write\(AGENTS\.md\)/)
  })

  it("/init in a project that has a CLAUDE.md asks to improve that file, not to write a new one", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, "CLAUDE.md"), "Use tabs.\n")
    const { server, term } = await repl([FakeAnthropic.textReply("Improved.")], { dir })
    enter(term, "/init")
    await term.waitFor("Improved.")
    const asked = lastUserText(server, 0)
    assert.include(asked, "Study this repository and improve CLAUDE.md")
    assert.include(asked, "CLAUDE.md already exists: Read it first")
    assert.notInclude(asked, "Create AGENTS.md")
  })

  it("/help lists the setup commands with their descriptions", async () => {
    const { term } = await repl([])
    enter(term, "/help")
    const screen = await term.waitFor(/\/memory.*\n[\s\S]*› $/m)
    for (const name of ["/init", "/status", "/permissions", "/mcp", "/memory"]) assert.include(screen, name)
    assert.match(screen, /\/init \[focus\]\s+Write an AGENTS\.md/)
    assert.match(screen, /\/mcp\s+Show the MCP servers, their status and their tools/)
  })
})
