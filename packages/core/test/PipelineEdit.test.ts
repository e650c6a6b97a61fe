/**
 * Editing the context pipeline by stage id: what an embedder writes to drop a stage and add one of
 * its own, over Keel's own pipeline, keeping its compactor.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  Autocompact,
  Compactor,
  ContextCollapse,
  ContextManagement,
  Message,
  Microcompact,
  Pipeline,
  Session,
  Snip,
  Stage,
  TestModel,
  ToolResultBudget
} from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { collect, resultOf } from "./support/Sessions.js"

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-pipeline-"))

/** An embedder's stage: it counts its runs and tags the prompt the model sees. */
const makeTagger = (runs: Ref.Ref<number>): Stage.Stage => ({
  id: Stage.id("my-tagger"),
  run: (messages) =>
    Effect.gen(function*() {
      yield* Ref.update(runs, (n) => n + 1)
      const last = messages[messages.length - 1]
      if (!(last instanceof Message.UserMessage) || typeof last.content !== "string") return { messages }
      return { messages: [...messages.slice(0, -1), Message.user(`[tagged] ${last.content}`)], report: "tagged the prompt" }
    })
})

describe("Pipeline editing by stage id", () => {
  it.scoped("an embedder drops Snip and adds a stage before Autocompact; the compactor stays", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      // What the embedder writes: Keel's pipeline, one stage out, one in, by id.
      const context = Pipeline.layerEdit(
        Pipeline.without(Snip.id),
        Pipeline.insertBefore(Autocompact.id, makeTagger(runs))
      ).pipe(Layer.provideMerge(ContextManagement.layer({ directory: tmp() })), Layer.provide(NodeContext.layer))

      const { compactor, pipeline, result, sent } = yield* Effect.gen(function*() {
        const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
        const result = resultOf(yield* collect(session.submit("hello")))
        const requests = yield* (yield* TestModel.TestModel).requests
        return {
          pipeline: yield* Pipeline.Pipeline,
          compactor: yield* Compactor.Compactor,
          result,
          sent: requests[0]!.messages
        }
      }).pipe(Effect.provide(Testing.layer([TestModel.text("hi")], { context })))

      assert.deepStrictEqual(pipeline.stages.map((s) => s.id), [
        ToolResultBudget.id,
        Microcompact.id,
        ContextCollapse.id,
        pipeline.stages[3]!.id,
        Autocompact.id
      ])
      assert.strictEqual(pipeline.stages[3]!.id.name, "my-tagger")
      assert.strictEqual(yield* Ref.get(runs), 1)
      assert.strictEqual((sent[0] as Message.UserMessage).content, "[tagged] hello")
      assert.strictEqual(result.subtype, "success")
      assert.isTrue(compactor.available, "ContextManagement's compactor is still the one in context")
    }))

  it("the edits: without, insertBefore, insertAfter, replace, append, prepend; a stage is found by identity, not name", () => {
    const stage = (name: string): Stage.Stage => ({ id: Stage.id(name), run: (messages) => Effect.succeed({ messages }) })
    const [a, b, c, d] = [stage("a"), stage("b"), stage("c"), stage("d")]
    const names = (p: Pipeline.Service) => p.stages.map((s) => s.id.name)
    const base = Pipeline.make([a, b, c])
    assert.deepStrictEqual(names(Pipeline.edit(base, Pipeline.without(b.id))), ["a", "c"])
    assert.deepStrictEqual(names(Pipeline.edit(base, Pipeline.insertBefore(b.id, d))), ["a", "d", "b", "c"])
    assert.deepStrictEqual(names(Pipeline.edit(base, Pipeline.insertAfter(c.id, d))), ["a", "b", "c", "d"])
    assert.deepStrictEqual(names(Pipeline.edit(base, Pipeline.replace(a.id, d))), ["d", "b", "c"])
    assert.deepStrictEqual(names(Pipeline.edit(base, Pipeline.append(d), Pipeline.prepend(stage("z")))), ["z", "a", "b", "c", "d"])
    // Another stage that happens to share a name is another stage.
    assert.deepStrictEqual(names(Pipeline.edit(base, Pipeline.without(Stage.id("b")))), ["a", "b", "c"])
    assert.throws(() => Pipeline.edit(base, Pipeline.insertBefore(d.id, stage("e"))), /has no stage d \(its stages: a, b, c\)/)
  })
})
