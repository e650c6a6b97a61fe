/**
 * The admission order rules, as pure functions: priorities, promotion, removal, and the start of
 * the next turn only when none runs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Admission, Message } from "@keel/core"

const item = (id: string, priority: Admission.Priority, queuedAt = 0): Admission.Queued => ({
  id,
  priority,
  input: id,
  preview: id,
  queuedAt
})

const order = (admission: Admission.Admission) => admission.queue.map((q) => q.id)

const fill = (...items: ReadonlyArray<Admission.Queued>) => items.reduce(Admission.enqueue, Admission.empty)

describe("Admission", () => {
  it("later goes to the tail, next before every later, now to the head (before another now)", () => {
    const a = fill(item("l1", "later"), item("n1", "next"), item("l2", "later"), item("n2", "next"))
    assert.deepStrictEqual(order(a), ["n1", "n2", "l1", "l2"])
    const b = Admission.enqueue(Admission.enqueue(a, item("now1", "now")), item("now2", "now"))
    assert.deepStrictEqual(order(b), ["now2", "now1", "n1", "n2", "l1", "l2"])
    assert.deepStrictEqual(order(Admission.enqueue(b, item("n3", "next"))), ["now2", "now1", "n1", "n2", "n3", "l1", "l2"])
  })

  it("promote moves an entry to the head; remove drops it; both leave the queue as it was for an unknown id", () => {
    const a = fill(item("a", "next"), item("b", "next"), item("c", "later"))
    assert.deepStrictEqual(order(Admission.promote(a, "c")), ["c", "a", "b"])
    assert.deepStrictEqual(order(Admission.remove(a, "b")), ["a", "c"])
    assert.strictEqual(Admission.promote(a, "zz"), a)
    assert.deepStrictEqual(order(Admission.remove(a, "zz")), ["a", "b", "c"])
    assert.deepStrictEqual(order(Admission.clear(a)), [])
  })

  it("start takes the head only when nothing runs; finish lets the next start", () => {
    const a = fill(item("a", "next"), item("b", "next"))
    const [first, running] = Admission.start(a)
    assert.strictEqual(first?.id, "a")
    assert.strictEqual(running.running, "a")
    assert.deepStrictEqual(order(running), ["b"])
    const [none, same] = Admission.start(running)
    assert.isUndefined(none)
    assert.strictEqual(same, running)
    const [second] = Admission.start(Admission.finish(running))
    assert.strictEqual(second?.id, "b")
    assert.deepStrictEqual(Admission.start(Admission.empty), [undefined, Admission.empty])
  })

  it("snapshots list the queue with positions, without the inputs", () => {
    const a = fill(item("a", "later", 5), item("b", "next", 7))
    assert.deepStrictEqual(Admission.snapshots(a), [
      { id: "b", priority: "next", preview: "b", queuedAt: 7, position: 0, kind: "input" },
      { id: "a", priority: "later", preview: "a", queuedAt: 5, position: 1, kind: "input" }
    ])
  })

  it("a preview is the text on one line, cut with an ellipsis; blocks other than text are named", () => {
    assert.strictEqual(Admission.preview("  fix\n\nthe   bug  "), "fix the bug")
    const long = Admission.preview("x".repeat(500))
    assert.strictEqual(long.length, Admission.PREVIEW_CHARS)
    assert.isTrue(long.endsWith("…"))
    const message = new Message.UserMessage({
      content: [new Message.TextBlock({ text: "look at" }), new Message.ImageBlock({ source: { type: "base64", media_type: "image/png", data: "AA==" } })]
    })
    assert.strictEqual(Admission.preview(message), "look at [image]")
  })
})
