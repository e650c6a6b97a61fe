/**
 * Keel embedded by Layer composition: every service the session uses is a layer you choose, and
 * leaving one out is a compile error (the README's embedding example is this file). Prints every
 * message of one turn as a JSON line, as `keel -p --output-format stream-json` does.
 *
 *   ANTHROPIC_API_KEY=sk-ant-... npx tsx examples/embedding.ts "read package.json and name its dependencies"
 */
import { NodeContext } from "@effect/platform-node"
import {
  AnthropicModel,
  BuiltinCommands,
  ContextAssembly,
  ContextManagement,
  Hooks,
  Ids,
  Permissions,
  PromptCaching,
  Resilience,
  Session,
  SessionStore,
  ToolRuntime
} from "@keel/core"
import { BuiltinTools } from "@keel/tools"
import { Console, Effect, Layer, Stream } from "effect"
import * as os from "node:os"
import * as path from "node:path"

const home = path.join(os.homedir(), ".keel")

// The model: the API under the idle watchdog, retries and fallback, its requests marked for prompt
// caching (each is a layer of its own too: IdleWatchdog, Retry.layer({ schedule }), Fallback).
const Model = PromptCaching.layer().pipe(
  Layer.provide(Resilience.layer({ fallbackModels: ["claude-haiku-4-5"] })),
  Layer.provide(AnthropicModel.layerConfig)
)

// The rest of the kernel. Each line is a choice, and each has its explicit "none":
const Kernel = Layer.mergeAll(
  Model,
  ContextManagement.layer({ directory: path.join(home, "sessions") }).pipe(Layer.provide(Model)), // or ContextManagement.layerNone
  ToolRuntime.layer(),
  ContextAssembly.layer({ home }), // or ContextAssembly.layerMinimal
  SessionStore.layerFile({ home }), // or SessionStore.layerNoop
  BuiltinCommands.layer, // add your own with Commands.layerAppend([...])
  Ids.layer,
  Hooks.layerNone
).pipe(
  Layer.provideMerge(BuiltinTools.layer()),
  // Claude Code's default mode: reads run, edits and shell commands ask (and, with nobody to ask,
  // are denied). Permissions.layerAllowAll is the explicit "no checks".
  Layer.provideMerge(Permissions.layerDefault),
  Layer.provide(NodeContext.layer)
)

const program = Effect.gen(function*() {
  const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: process.cwd() })
  yield* session.submit(process.argv[2] ?? "read package.json and name its dependencies").pipe(
    Stream.runForEach((message) => Console.log(JSON.stringify(message)))
  )
})

Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(Kernel)))
