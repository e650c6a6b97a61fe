/**
 * `apiKeyHelper` with real shell commands: its trimmed stdout is the key; failing, printing nothing
 * and running past the timeout (under the TestClock) are typed errors naming the setting and its
 * file; the environment's key wins; and against the loopback fake API, a 401 re-runs the helper
 * once and the request is retried with the new key.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Credentials, ModelClient, Message, Resilience } from "@keel/core"
import { Chunk, ConfigProvider, Effect, Fiber, Layer, Redacted, Stream, TestClock, TestServices } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "../../../../test/support/FakeAnthropic.js"
import * as ApiKeyHelper from "../../src/settings/ApiKeyHelper.js"

const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-helper-"))

const helper = (command: string, cwd = dir()): ApiKeyHelper.Helper => ({ command, cwd, source: ".claude/settings.json" })

/** A helper that counts its runs in `count` and prints `key-N` with blanks around it. */
const counting = (cwd: string): ApiKeyHelper.Helper =>
  helper(`n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; printf '  key-%s \\n' $n`, cwd)

const failureOf = (h: ApiKeyHelper.Helper) =>
  Effect.flip(ApiKeyHelper.run(h)).pipe(Effect.provide(NodeContext.layer))

describe("ApiKeyHelper.run", () => {
  it.live("the key is the helper's stdout, trimmed; it runs in the working directory with the environment given", () =>
    Effect.gen(function*() {
      const cwd = dir()
      fs.writeFileSync(path.join(cwd, "key.txt"), "sk-from-file\n")
      const key = yield* ApiKeyHelper.run({ ...helper("cat key.txt; echo \"-$SUFFIX\"", cwd), env: { SUFFIX: "x" } })
      assert.strictEqual(key, "sk-from-file\n-x")
      assert.strictEqual(yield* ApiKeyHelper.run(helper("  printf '\\n  sk-trimmed  \\n\\n'")), "sk-trimmed")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("a helper that exits non-zero: the setting, its file, the exit code and its stderr", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(helper("echo 'vault is sealed' >&2; exit 3"))
      assert.strictEqual(error._tag, "ApiKeyHelperFailed")
      assert.strictEqual(
        error.message,
        "apiKeyHelper (.claude/settings.json) exited with code 3 (stderr: vault is sealed): " +
          "echo 'vault is sealed' >&2; exit 3. Fix the command so it prints the API key on stdout, or set ANTHROPIC_API_KEY."
      )
    }))

  it.live("a helper that prints nothing, or only blanks, gives no key", () =>
    Effect.gen(function*() {
      assert.match((yield* failureOf(helper("true"))).message, /^apiKeyHelper \(\.claude\/settings\.json\) printed no key: true\./)
      assert.match((yield* failureOf(helper("echo '   '"))).message, /printed no key/)
    }))

  it.live("its stdin is empty: a helper that reads stdin does not hang", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* ApiKeyHelper.run(helper("cat; echo sk-after-eof")), "sk-after-eof")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a helper still running at its timeout is killed with its children: a typed error exactly at the timeout", () =>
    Effect.gen(function*() {
      const cwd = dir()
      const fiber = yield* Effect.fork(
        ApiKeyHelper.run({ ...helper("sleep 30 & echo $! > child.pid; wait", cwd), timeout: "5 seconds" })
      )
      // The helper has started (a real process: waited for in real time, at most 10 s).
      const pidFile = path.join(cwd, "child.pid")
      yield* TestServices.provideLive(
        Effect.sleep("10 millis").pipe(Effect.repeat({ until: () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"), times: 1000 }))
      )
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      yield* TestClock.adjust("4999 millis")
      assert.isNull(fiber.unsafePoll(), "still running just before the timeout")
      process.kill(pid, 0)
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error.reason, "timed out after 5s and was killed")
      // Killed: gone, or a zombie its new parent has not reaped yet (Linux's /proc tells which).
      // SIGKILL lands asynchronously: a busy machine may show the child running for a moment.
      const stat = path.join("/proc", String(pid), "stat")
      const state = () => (fs.existsSync(stat) ? fs.readFileSync(stat, "utf8").split(") ")[1]?.[0] : "gone")
      yield* TestServices.provideLive(
        Effect.sleep("10 millis").pipe(Effect.repeat({ until: () => state() === "Z" || state() === "gone", times: 300 }))
      )
      assert.include(["Z", "gone"], state(), "the helper's child was killed too")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("ApiKeyHelper credentials", () => {
  it.live("the helper runs once at start, and again on refresh", () =>
    Effect.gen(function*() {
      const cwd = dir()
      const credentials = yield* ApiKeyHelper.credentials(counting(cwd))
      assert.strictEqual(Redacted.value((yield* credentials.current).apiKey!), "key-1")
      assert.strictEqual(Redacted.value((yield* credentials.current).apiKey!), "key-1")
      yield* credentials.refresh
      assert.strictEqual(Redacted.value((yield* credentials.current).apiKey!), "key-2")
      assert.strictEqual(fs.readFileSync(path.join(cwd, "count"), "utf8").trim(), "2")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("a refresh that fails keeps the old key and fails as missing credentials naming the helper", () =>
    Effect.gen(function*() {
      const cwd = dir()
      const credentials = yield* ApiKeyHelper.credentials(
        helper("if [ -f ran ]; then exit 4; fi; touch ran; echo sk-first", cwd)
      )
      const error = yield* Effect.flip(credentials.refresh)
      assert.strictEqual(error._tag, "MissingCredentials")
      assert.include(error.message, "apiKeyHelper (.claude/settings.json) exited with code 4")
      assert.strictEqual(Redacted.value((yield* credentials.current).apiKey!), "sk-first")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("ANTHROPIC_API_KEY in the environment wins: the helper is not run", () =>
    Effect.gen(function*() {
      const cwd = dir()
      const credentials = yield* Effect.provide(
        Credentials.Credentials,
        ApiKeyHelper.layerCredentials(counting(cwd))
      ).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["ANTHROPIC_API_KEY", "sk-env"]]))))
      assert.strictEqual(Redacted.value((yield* credentials.current).apiKey!), "sk-env")
      assert.isFalse(fs.existsSync(path.join(cwd, "count")))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("against the fake API: the helper's key is sent; a 401 re-runs it once and the request is retried with the new key", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([
        FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key"),
        FakeAnthropic.textReply("hello")
      ])
      const cwd = dir()
      const layer = Resilience.layer().pipe(
        Layer.provide(ApiKeyHelper.modelLayer(counting(cwd))),
        Layer.provide(NodeContext.layer)
      )
      const client = yield* Effect.provide(ModelClient.ModelClient, layer).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["ANTHROPIC_BASE_URL", fake.url]])))
      )
      const items = yield* Stream.runCollect(
        client.stream({ model: "claude-test", max_tokens: 64, messages: [Message.user("hi")], source: "foreground" })
      )
      assert.isTrue(Chunk.toReadonlyArray(items).some((i) => i.type === "message_stop"))
      // The Anthropic SDK sends an API key as a bearer token.
      assert.deepStrictEqual(fake.requests.map((r) => r.headers["authorization"]), ["Bearer key-1", "Bearer key-2"])
      assert.strictEqual(fs.readFileSync(path.join(cwd, "count"), "utf8").trim(), "2", "run at start and once after the 401")
    }))

  it.scopedLive("a second 401 in the same call is final: the helper is not run a third time", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([
        FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key"),
        FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key")
      ])
      const cwd = dir()
      const layer = Resilience.layer().pipe(
        Layer.provide(ApiKeyHelper.modelLayer(counting(cwd))),
        Layer.provide(NodeContext.layer)
      )
      const client = yield* Effect.provide(ModelClient.ModelClient, layer).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["ANTHROPIC_BASE_URL", fake.url]])))
      )
      const error = yield* Effect.flip(Stream.runDrain(
        client.stream({ model: "claude-test", max_tokens: 64, messages: [Message.user("hi")], source: "foreground" })
      ))
      assert.strictEqual(error._tag, "Unauthorized")
      assert.strictEqual(fake.requests.length, 2)
      assert.strictEqual(fs.readFileSync(path.join(cwd, "count"), "utf8").trim(), "2")
    }))
})
