/**
 * ProtectedPaths: writes that could raise the model's own future permissions ask in every mode,
 * through every spelling of the path an attacker can think of, unless a rule names the exact file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Permissions, ProtectedPaths } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const workspace = (): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-protected-")))
  fs.mkdirSync(path.join(dir, ".git", "hooks"), { recursive: true })
  fs.writeFileSync(path.join(dir, ".git", "config"), "[core]\n")
  fs.mkdirSync(path.join(dir, "src"))
  fs.writeFileSync(path.join(dir, "src", "a.ts"), "")
  return dir
}

const noHomes: ProtectedPaths.Homes = { folders: [] }

const decideIn = (
  cwd: string,
  mode: Permissions.Mode,
  toolName: string,
  input: Record<string, unknown>,
  allow: ReadonlyArray<string> = []
) =>
  Permissions.decide(Permissions.config({ mode, allow }).config, {
    toolName,
    input,
    isReadOnly: false,
    toolUseId: "toolu_1",
    cwd
  })._tag

describe("ProtectedPaths", () => {
  it("protects settings, .git, .mcp.json and shell start-up files, anywhere and however spelt", () => {
    const cwd = workspace()
    const protectedPaths = [
      ".keel/settings.json",
      ".keel/settings.local.json",
      ".claude/settings.json",
      ".claude/settings.local.json",
      ".claude/commands/x.md",
      ".claude/agents/evil.md",
      ".mcp.json",
      ".git/config",
      ".git/hooks/pre-commit",
      ".git/HEAD",
      ".git",
      ".git/",
      "./.keel//settings.json",
      "src/../.keel/settings.json",
      "src/../../" + path.basename(cwd) + "/.git/config",
      cwd + "/.git/config",
      ".keel/new-folder/new-file.json",
      "sub/project/.git/config",
      "sub/.mcp.json",
      ".GIT/config",
      ".Keel/settings.json",
      ".g\u200cit/config",
      ".bashrc",
      ".bash_profile",
      ".bash_login",
      ".profile",
      ".zshrc",
      ".zprofile",
      ".zshenv",
      ".envrc",
      ".gitconfig",
      ".gitmodules",
      ".gitattributes",
      ".husky/pre-commit",
      ".vscode/tasks.json",
      ".idea/workspace.xml",
      ".config/git/config",
      ".config/fish/config.fish",
      path.join(os.homedir(), ".bashrc"),
      path.join(os.homedir(), ".claude", "settings.json"),
      path.join(os.homedir(), ".claude.json")
    ]
    for (const file of protectedPaths) {
      assert.isDefined(ProtectedPaths.protectedReason(file, cwd, noHomes), file)
    }
    for (const file of ["src/a.ts", "README.md", "git/config", ".github/workflows/ci.yml", "src/.gitkeep", "my.bashrc.bak", "keel/settings.json"]) {
      assert.isUndefined(ProtectedPaths.protectedReason(file, cwd, noHomes), file)
    }
  })

  it("follows symlinks: a link to .git/config, a linked folder into .git, a link chain", () => {
    const cwd = workspace()
    fs.symlinkSync(path.join(cwd, ".git", "config"), path.join(cwd, "innocent.txt"))
    fs.symlinkSync(path.join(cwd, ".git"), path.join(cwd, "docs"))
    fs.symlinkSync(path.join(cwd, "docs"), path.join(cwd, "chain"))
    fs.symlinkSync(path.join(cwd, ".keel-missing"), path.join(cwd, "dangling"))
    fs.mkdirSync(path.join(cwd, "home"))
    fs.symlinkSync(path.join(cwd, "home", ".bashrc"), path.join(cwd, "notes.md"))
    for (const file of ["innocent.txt", "docs/config", "docs/hooks/post-checkout", "chain/config", "chain/", "notes.md"]) {
      assert.isDefined(ProtectedPaths.protectedReason(file, cwd, noHomes), file)
    }
  })

  it("protects the git folder a worktree's .git file names, and its common folder", () => {
    const cwd = workspace()
    const wt = path.join(cwd, "wt")
    fs.mkdirSync(path.join(cwd, "store", "worktrees", "wt"), { recursive: true })
    fs.writeFileSync(path.join(cwd, "store", "worktrees", "wt", "commondir"), "../..\n")
    fs.mkdirSync(wt)
    fs.writeFileSync(path.join(wt, ".git"), "gitdir: ../store/worktrees/wt\n")
    assert.isDefined(ProtectedPaths.protectedReason("../store/worktrees/wt/HEAD", wt, noHomes))
    assert.isDefined(ProtectedPaths.protectedReason("../store/config", wt, noHomes))
    assert.isDefined(ProtectedPaths.protectedReason(".git", wt, noHomes))
    assert.isUndefined(ProtectedPaths.protectedReason("src.ts", wt, noHomes))
  })

  it("protects $KEEL_HOME and $CLAUDE_CONFIG_DIR whatever their names", () => {
    const cwd = workspace()
    const homes = ProtectedPaths.homesFromEnv({ KEEL_HOME: path.join(cwd, "kh"), CLAUDE_CONFIG_DIR: path.join(cwd, "cc") })
    assert.isDefined(ProtectedPaths.protectedReason("kh/settings.json", cwd, homes))
    assert.isDefined(ProtectedPaths.protectedReason("cc/settings.json", cwd, homes))
    assert.isUndefined(ProtectedPaths.protectedReason("kh/settings.json", cwd, noHomes))
  })

  it("writes there ask in acceptEdits and bypassPermissions, deny in dontAsk and plan", () => {
    const cwd = workspace()
    for (const toolName of ["Write", "Edit", "MultiEdit"]) {
      const input = { file_path: ".keel/settings.json", content: "{}", old_string: "a", new_string: "b", edits: [] }
      assert.strictEqual(decideIn(cwd, "acceptEdits", toolName, input), "Ask", toolName)
      assert.strictEqual(decideIn(cwd, "bypassPermissions", toolName, input), "Ask", toolName)
      assert.strictEqual(decideIn(cwd, "default", toolName, input), "Ask", toolName)
      assert.strictEqual(decideIn(cwd, "dontAsk", toolName, input), "Deny", toolName)
      assert.strictEqual(decideIn(cwd, "plan", toolName, input), "Deny", toolName)
    }
    assert.strictEqual(decideIn(cwd, "acceptEdits", "NotebookEdit", { notebook_path: ".git/x.ipynb", new_source: "" }), "Ask")
    // Reads are not writes; an ordinary file is still allowed.
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", { file_path: "src/a.ts", content: "" }), "Allow")
    assert.strictEqual(decideIn(cwd, "bypassPermissions", "Write", { file_path: "src/a.ts", content: "" }), "Allow")
    assert.strictEqual(
      Permissions.decide(Permissions.config({ mode: "acceptEdits" }).config, {
        toolName: "Read",
        input: { file_path: ".git/config" },
        isReadOnly: true,
        toolUseId: "t",
        cwd
      })._tag,
      "Allow"
    )
  })

  it("only an allow rule naming the exact file allows it; wildcards and whole-tool rules do not", () => {
    const cwd = workspace()
    const write = { file_path: ".keel/settings.json", content: "{}" }
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, ["Write"]), "Ask")
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, ["Write(./.keel/**)"]), "Ask")
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, ["Write(.keel/*.json)"]), "Ask")
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, ["Write(.keel)"]), "Ask")
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, ["Edit(./.keel/settings.json)"]), "Ask")
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, ["Write(./.keel/settings.json)"]), "Allow")
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", write, [`Write(/${cwd}/.keel/settings.json)`]), "Allow")
    assert.strictEqual(decideIn(cwd, "default", "Write", { file_path: "./.keel//settings.json", content: "" }, ["Write(.keel/settings.json)"]), "Allow")
    // The exact rule for one file does not open its neighbour.
    assert.strictEqual(decideIn(cwd, "acceptEdits", "Write", { file_path: ".keel/settings.local.json", content: "" }, ["Write(.keel/settings.json)"]), "Ask")
    // A deny rule still wins over the exact allow.
    assert.strictEqual(
      Permissions.decide(Permissions.config({ mode: "acceptEdits", allow: ["Write(.mcp.json)"], deny: ["Write"] }).config, {
        toolName: "Write",
        input: { file_path: ".mcp.json", content: "" },
        isReadOnly: false,
        toolUseId: "t",
        cwd
      })._tag,
      "Deny"
    )
  })

  it("says why and which rule would allow it", () => {
    const cwd = workspace()
    const reason = ProtectedPaths.check([], { toolName: "Write", input: { file_path: ".git/config" }, cwd }, noHomes)
    assert.include(reason, path.join(cwd, ".git/config"))
    assert.include(reason, `Write(/${cwd}/.git/config)`)
  })
})
