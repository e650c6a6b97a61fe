/**
 * `RequestJson.stringify`: the bytes of `JSON.stringify(body)`, each message serialised once.
 */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as RequestJson from "../../src/model/RequestJson.js"

const param = fc.record({
  role: fc.constantFrom("user", "assistant"),
  content: fc.oneof(
    fc.string(),
    fc.array(fc.record({ type: fc.constant("text"), text: fc.string() }), { maxLength: 3 })
  )
})

describe("RequestJson", () => {
  it("gives exactly JSON.stringify's bytes, whatever the keys around the messages hold", () => {
    fc.assert(
      fc.property(
        fc.array(param, { maxLength: 6 }),
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
        (messages, params) => {
          // toBody's order: params, model, tools (a schema may name a `messages` property), messages, stream.
          // (A `messages` key first: the body's own keeps that place, before the tools'.)
          const body = {
            ...{ messages: "first" },
            ...params,
            model: "m",
            tools: [{ name: "t", input_schema: { type: "object", properties: { messages: [] } } }],
            system: "\"messages\":[]",
            messages,
            stream: true
          }
          assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("a body that holds the placeholder elsewhere (in a prompt, in a message) still gives JSON.stringify's bytes", () => {
    const place = "\u0000keel-request-messages\u0000"
    const messages = [{ role: "user", content: place }]
    for (const body of [
      { model: "m", system: place, messages, stream: true },
      { model: "m", messages, stream: true },
      { model: "m", system: [{ type: "text", text: `"${place}"` }], messages, stream: true }
    ]) {
      assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
    }
  })

  it("serialises a message once: a later request reuses its JSON", () => {
    const first = { role: "user", content: "hi" }
    const body = { model: "m", messages: [first], stream: true }
    assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
    // Had it been serialised again, the changed text would show.
    ;(first as { content: string }).content = "changed"
    const second = { role: "assistant", content: "ok" }
    const later = { model: "m", messages: [first, second], stream: true }
    assert.strictEqual(
      RequestJson.stringify(later),
      "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"ok\"}],\"stream\":true}"
    )
  })
  it("serialises the body's other arrays (tools, system) once: a later request with the same arrays reuses their JSON", () => {
    const tools = [{ name: "t", input_schema: { type: "object" } }]
    const system = [{ type: "text", text: "base" }]
    const body = { model: "m", max_tokens: 1, tools, system, messages: [], stream: true }
    assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
    ;(tools[0] as { name: string }).name = "changed"
    system[0]!.text = "changed"
    assert.strictEqual(
      RequestJson.stringify({ ...body, messages: [{ role: "user", content: "hi" }] }),
      "{\"model\":\"m\",\"max_tokens\":1,\"tools\":[{\"name\":\"t\",\"input_schema\":{\"type\":\"object\"}}]," +
        "\"system\":[{\"type\":\"text\",\"text\":\"base\"}],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}"
    )
  })

  it("leaves out what JSON.stringify leaves out, and writes what it writes for odd values", () => {
    const bodies: Array<{ readonly messages: ReadonlyArray<object> }> = [
      { messages: [] },
      { model: undefined, fn: () => 1, messages: [undefined as unknown as object, null as unknown as object], n: -0 },
      { messages: [{ role: "user", content: "x", extra: undefined }], at: new Date(0) },
      Object.assign(Object.create({ inherited: 1 }), { messages: [] }),
      { toJSON: () => ({ replaced: true }), messages: [] } as { readonly messages: ReadonlyArray<object> }
    ]
    for (const body of bodies) assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
  })
  it("a turn's requests, one after another, each give JSON.stringify's bytes, whatever each shares with the one before", () => {
    // Each request: the previous one's messages (the same objects) cut, one replaced (a stage's
    // rewrite, the tail's marked copy), some added; or another history altogether.
    const step = fc.record({
      keep: fc.nat({ max: 8 }),
      replace: fc.option(fc.nat({ max: 8 }), { nil: undefined }),
      added: fc.array(param, { maxLength: 3 }),
      fresh: fc.boolean()
    })
    fc.assert(
      fc.property(fc.array(param, { maxLength: 4 }), fc.array(step, { maxLength: 8 }), (first, steps) => {
        let messages: Array<object> = first.map((m) => ({ ...m }))
        const check = () => {
          const body = { model: "m", messages, stream: true }
          assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
        }
        check()
        for (const s of steps) {
          messages = s.fresh ? s.added.map((m) => ({ ...m })) : [...messages.slice(0, s.keep), ...s.added.map((m) => ({ ...m }))]
          if (s.replace !== undefined && s.replace < messages.length) {
            messages[s.replace] = { ...messages[s.replace], marked: true }
          }
          check()
          // A retry: the same request again.
          if (s.keep % 3 === 0) check()
        }
      }),
      { numRuns: 500 }
    )
  })

  it("a request with fewer of the same messages than the one before (compacted, cut) gives its own bytes", () => {
    const [a, b, c] = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }]
    for (const messages of [[a, b, c], [a, b], [a], [a, b, c], [a, b, c], []]) {
      const body = { messages }
      assert.strictEqual(RequestJson.stringify(body), JSON.stringify(body))
    }
  })
})

