/**
 * Sessions for tests: the layer a session runs on (the scripted model, no context stages, the tool
 * runtime), and what the tests read from a session's output and messages.
 */
import { assert } from "@effect/vitest"
import { Message, Pipeline, TestModel, ToolRegistry, ToolRuntime } from "@keel/core"
import type { SdkMessage, Tool } from "@keel/core"
import { Chunk, Effect, Layer, Schema, Stream } from "effect"
import { sleeper } from "./Tools.js"

/** The model scripted with `script`, no context stages, and the tool runtime over `tools` (`Sleep` unless given). */
export const layerFor = (script: ReadonlyArray<TestModel.ScriptItem>, tools: ReadonlyArray<Tool.Any> = [sleeper]) =>
  Layer.mergeAll(
    TestModel.layer(script),
    Pipeline.layerEmpty,
    ToolRuntime.layer().pipe(Layer.provideMerge(ToolRegistry.layer(tools)))
  )

/** Every message of a session's stream, in order. */
export const collect = (stream: Stream.Stream<SdkMessage.SdkMessage>) =>
  Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray))

/** The last message, asserted to be the `result`. */
export const resultOf = (messages: ReadonlyArray<SdkMessage.SdkMessage>): SdkMessage.Result => {
  const last = messages[messages.length - 1]!
  assert.strictEqual(last.type, "result")
  return last as SdkMessage.Result
}

/** Each message's type, with the subtype of `system` ones: `system/init`, `assistant`, `result`. */
export const kinds = (messages: ReadonlyArray<SdkMessage.SdkMessage>) =>
  messages.map((m) => (m.type === "system" ? `system/${m.subtype}` : m.type))

/** A message as plain data. */
export const encodeMessage = Schema.encodeSync(Message.Message)

/** Messages as plain data, to compare by value. */
export const plain = (messages: ReadonlyArray<Message.Message>) => messages.map((m) => encodeMessage(m))
