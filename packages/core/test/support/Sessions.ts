/**
 * Sessions for tests: the layer a session runs on (the testing layer: the scripted model, no context
 * stages, the tools, every call allowed), and what the tests read from a session's output and
 * messages.
 */
import { assert } from "@effect/vitest"
import { Message, type TestModel } from "@keel/core"
import type { SdkMessage, Session, Tool } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Chunk, Effect, ExecutionStrategy, Exit, Ref, Schema, Scope, Stream } from "effect"
import { sleeper } from "./Tools.js"

/** The testing layer over `script` and `tools` (`Sleep` unless given). */
export const layerFor = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  tools: ReadonlyArray<Tool.Any> = [sleeper],
  options: Omit<Testing.Options, "tools"> = {}
) => Testing.layer(script, { ...options, tools })

/** The current conversation of a session. */
export const messagesOf = (session: Session.Service) => Effect.flatMap(session.state, (state) => Ref.get(state.messages))

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

/** Each session's own scope (a child of the test's), to close it as a process would end: {@link release}. */
const scopes = new WeakMap<object, Scope.CloseableScope>()

/** Runs `make` in a scope of its own, remembered for its session (`pick` finds it in the result). */
export const ownScope = <A, E, R>(make: Effect.Effect<A, E, R | Scope.Scope>, pick: (a: A) => object) =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    // A session that could not open holds nothing either (a process would have ended).
    const made = yield* Scope.extend(make, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
    scopes.set(pick(made), scope)
    return made
  })

/** Closes a session's scope: its lock is released (as when its process ends); its state stays readable. */
export const release = (session: Session.Service) => Effect.suspend(() => Scope.close(scopes.get(session)!, Exit.void))
