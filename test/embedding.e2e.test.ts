/**
 * The README's embedding example (`examples/embedding.ts`) fails closed: with its permissions layer
 * left out it does not compile, and the compiler names the missing service; with Claude Code's
 * default layer a model's `Bash` `touch` is denied (and reported); with the explicit allow-all
 * layer it runs. The README shows the example as it is.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import ts from "typescript"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const root = path.resolve(import.meta.dirname, "..")
const example = fs.readFileSync(path.join(root, "examples", "embedding.ts"), "utf8")
const PERMISSIONS = "  Layer.provideMerge(Permissions.layerDefault),\n"

/** The example with `edit` applied, as a file next to it (module resolution as the example's); removed by `cleanup`. */
const variant = (edit: (source: string) => string) => {
  const file = path.join(root, "examples", `.embedding-${process.pid}-${Math.random().toString(36).slice(2)}.ts`)
  fs.writeFileSync(file, edit(example))
  return { file, cleanup: () => fs.rmSync(file, { force: true }) }
}

/**
 * The compiler's errors for each of `files`, with the repository's settings. One program for all of
 * them: each file's diagnostics are its own, and the checker resolves Effect's types only once.
 */
const compile = (...files: Array<string>): Array<Array<string>> => {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined
  })!
  const program = ts.createProgram(files, { ...config.options, noEmit: true })
  return files.map((file) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) =>
      ts.flattenDiagnosticMessageText(d.messageText, "\n")
    )
  )
}

/** Runs a variant of the example with `prompt` in a fresh folder against a fake API playing `script`. */
const runExample = async (file: string, script: ReadonlyArray<FakeAnthropic.ScriptItem>, prompt: string) => {
  const server = await fake(script)
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "keel-embedding-"))
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "keel-embedding-home-"))
  const tsx = path.join(root, "node_modules", ".bin", "tsx")
  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(tsx, [file, prompt], { cwd, env: { ...process.env, ...envFor(server), HOME: home } }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
  })
  return { ...out, cwd, server }
}

const touching = (target: string) => [
  FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: `touch ${target}` } }]),
  FakeAnthropic.textReply("Done.")
]

describe("the README's embedding example", () => {
  it("is the README's code, as it is (and so is the README's retry test)", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const code = example.slice(example.indexOf("import "))
    assert.include(readme, "```ts\n" + code + "```")
    const retryTest = fs.readFileSync(path.join(root, "test", "readme", "retry.test.ts"), "utf8")
    assert.include(readme, "```ts\n" + retryTest + "```")
  })

  it("without its permissions layer it does not compile, and the error names Permissions", () => {
    assert.include(example, PERMISSIONS)
    const { cleanup, file } = variant((source) => source.replace(PERMISSIONS, ""))
    const whole = variant((source) => source)
    try {
      const [errors, wholeErrors] = compile(file, whole.file)
      assert.isAbove(errors!.length, 0)
      // The program's requirements are left with the service no layer provides: it cannot be run.
      assert.isTrue(errors!.some((e) => e.includes("Type 'Permissions' is not assignable to type 'never'")), errors!.join("\n---\n"))
      assert.deepStrictEqual(wholeErrors, [])
    } finally {
      cleanup()
      whole.cleanup()
    }
  }, 120_000)

  it("with Claude Code's default permissions, a model's `touch` is denied, reported, and nothing is created", async () => {
    const { cleanup, file } = variant((source) => source)
    try {
      const target = path.join(os.tmpdir(), `keel-embedding-touched-${process.pid}-${Date.now()}`)
      const r = await runExample(file, touching(target), "touch it")
      assert.strictEqual(r.code, 0, r.stderr)
      const messages = lines(r.stdout)
      assert.strictEqual(messages[0].permissionMode, "default")
      const result = messages.at(-1)
      assert.strictEqual(result.type, "result")
      assert.deepStrictEqual(result.permission_denials.map((d: any) => [d.tool_name, d.tool_input.command]), [["Bash", `touch ${target}`]])
      assert.isFalse(fs.existsSync(target))
      assert.include(JSON.stringify(r.server.requests[1]!.body.messages.at(-1)), "Permission to use Bash was denied")
    } finally {
      cleanup()
    }
  }, 60_000)

  it("with the explicit allow-all layer it runs the command, and system/init says so", async () => {
    const { cleanup, file } = variant((source) => source.replace("Permissions.layerDefault", "Permissions.layerAllowAll"))
    try {
      const target = path.join(os.tmpdir(), `keel-embedding-touched-${process.pid}-${Date.now()}`)
      const r = await runExample(file, touching(target), "touch it")
      assert.strictEqual(r.code, 0, r.stderr)
      const messages = lines(r.stdout)
      assert.strictEqual(messages[0].permissionMode, "bypassPermissions")
      assert.deepStrictEqual(messages.at(-1).permission_denials, [])
      assert.isTrue(fs.existsSync(target))
      fs.rmSync(target)
    } finally {
      cleanup()
    }
  }, 60_000)
})
