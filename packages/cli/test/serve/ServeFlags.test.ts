import { assert, describe, it } from "@effect/vitest"
import { parseServe } from "../../src/serve/ServeFlags.js"

const serve = (argv: ReadonlyArray<string>) => {
  const parsed = parseServe(argv, "0.1.0")
  if (parsed._tag !== "Serve") throw new Error(`expected a server, got exit ${parsed.code}: ${parsed.stderr}`)
  return parsed
}

const refused = (argv: ReadonlyArray<string>) => {
  const parsed = parseServe(argv, "0.1.0")
  if (parsed._tag !== "Exit") throw new Error("expected a usage error")
  return parsed
}

describe("keel serve flags", () => {
  it("--stdio, or --port with --host; keel's session flags, anywhere, are the sessions' defaults", () => {
    assert.deepStrictEqual(serve(["--stdio"]).transport, { _tag: "Stdio" })
    const http = serve(["--model", "claude-opus-4-6", "--port", "0", "--allowedTools", "Read", "Bash(git:*)", "--host", "0.0.0.0"])
    assert.deepStrictEqual(http.transport, { _tag: "Http", port: 0, host: "0.0.0.0" })
    assert.strictEqual(http.flags.model, "claude-opus-4-6")
    assert.deepStrictEqual(http.flags.allowedTools, ["Read", "Bash(git:*)"])
    assert.deepStrictEqual(serve(["--port", "8080"]).transport, { _tag: "Http", port: 8080, host: "127.0.0.1" })
    const stdio = serve(["--permission-mode", "acceptEdits", "--stdio", "--no-session-persistence"])
    assert.deepStrictEqual([stdio.flags.permissionMode, stdio.flags.sessionPersistence], ["acceptEdits", false])
  })

  it("exactly one transport; no prompt, no -p, no per-session flags; a bad port or session flag is exit 2 with a line", () => {
    for (const argv of [[], ["--stdio", "--port", "1"]]) {
      const r = refused(argv)
      assert.deepStrictEqual([r.code, r.stderr.split("\n")[0]], [
        2,
        "keel serve: give one of --stdio (JSON lines on stdin and stdout) or --port <port> (HTTP)."
      ])
    }
    assert.include(refused(["--stdio", "hello"]).stderr, "keel serve: takes no prompt and no -p")
    assert.include(refused(["--stdio", "-p"]).stderr, "keel serve: takes no prompt and no -p")
    assert.include(refused(["--stdio", "--resume", "abc"]).stderr, "give them to session.start")
    assert.include(refused(["--port", "70000"]).stderr, "--port must be a port number from 0 to 65535")
    const bad = refused(["--stdio", "--permission-mode", "yolo"])
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, "Allowed choices are")
  })

  it("--help describes the server and its flags (exit 0)", () => {
    const help = refused(["--help"])
    assert.strictEqual(help.code, 0)
    assert.include(help.stdout, "Usage: keel serve")
    assert.include(help.stdout, "--stdio")
    assert.include(help.stdout, "sets\nthe defaults of the sessions the server opens")
  })
})
