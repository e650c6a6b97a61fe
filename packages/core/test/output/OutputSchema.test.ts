/**
 * The output schema: refused by name when it cannot be honoured (not JSON, not an object, not an
 * object schema, an unknown draft, not a valid JSON Schema in strict mode), and, once compiled, the
 * problems of a value in `/path: problem` form, every one of them.
 */
import { assert, describe, it } from "@effect/vitest"
import { OutputSchema } from "@keel/core"
import { Effect } from "effect"

const refused = (text: string) => Effect.flip(OutputSchema.parse(text, "--json-schema"))

const answer = JSON.stringify({
  type: "object",
  properties: { answer: { type: "number" }, tags: { type: "array", items: { type: "string" } } },
  required: ["answer"],
  additionalProperties: false
})

describe("OutputSchema", () => {
  it.effect("compiles a draft-07 object schema; validate lists every problem with its path, root for the top", () =>
    Effect.gen(function*() {
      const schema = yield* OutputSchema.parse(answer, "--json-schema")
      assert.deepStrictEqual(schema.schema, JSON.parse(answer))
      assert.deepStrictEqual(schema.validate({ answer: 42, tags: ["a"] }), [])
      assert.deepStrictEqual(schema.validate({ answer: "42" }), ["/answer: must be number"])
      assert.deepStrictEqual(schema.validate({ tags: ["a", 1], extra: true }), [
        "root: must have required property 'answer'",
        "root: must NOT have additional properties",
        "/tags/1: must be string"
      ])
      assert.strictEqual(
        OutputSchema.describe(schema.validate({ tags: [1] })),
        "root: must have required property 'answer', /tags/0: must be string"
      )
    }))

  it.effect("2020-12 and 2019-09 schemas (what zod's toJSONSchema emits) compile with their own validators", () =>
    Effect.gen(function*() {
      const modern = yield* OutputSchema.make({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        $defs: { n: { type: "number" } },
        properties: { answer: { $ref: "#/$defs/n" }, items: { type: "array", prefixItems: [{ type: "string" }] } },
        required: ["answer"]
      }, "outputFormat.schema")
      assert.deepStrictEqual(modern.validate({ answer: 1, items: ["x"] }), [])
      assert.deepStrictEqual(modern.validate({ answer: "1", items: [2] }), ["/answer: must be number", "/items/0: must be string"])
      const older = yield* OutputSchema.make({
        $schema: "https://json-schema.org/draft/2019-09/schema#",
        type: "object",
        properties: { answer: { type: "integer" } }
      }, "outputFormat.schema")
      assert.deepStrictEqual(older.validate({ answer: 1.5 }), ["/answer: must be integer"])
    }))

  it.effect("formats are checked, not ignored", () =>
    Effect.gen(function*() {
      const schema = yield* OutputSchema.make({ type: "object", properties: { email: { type: "string", format: "email" } } }, "s")
      assert.deepStrictEqual(schema.validate({ email: "a@example.com" }), [])
      assert.deepStrictEqual(schema.validate({ email: "not-an-email" }), ["/email: must match format \"email\""])
    }))

  it.effect("not JSON, not an object, not an object schema: refused, saying what to give", () =>
    Effect.gen(function*() {
      const notJson = yield* refused("{answer")
      assert.strictEqual(notJson.reason, "NotJson")
      assert.match(notJson.message, /^--json-schema is not valid JSON \(.+\); give a JSON Schema object, e\.g\. \{"type":"object"/)
      const array = yield* refused("[1]")
      assert.strictEqual(array.reason, "NotObject")
      assert.include(array.message, "--json-schema must be a JSON Schema object, got an array")
      const string = yield* refused(`{"type":"string"}`)
      assert.strictEqual(string.reason, "NotObjectType")
      assert.include(string.message, `--json-schema must describe an object ("type": "object" at its top, got "string")`)
      const untyped = yield* refused(`{"properties":{"a":{"type":"number"}}}`)
      assert.strictEqual(untyped.reason, "NotObjectType")
      assert.include(untyped.message, `got no "type"`)
    }))

  it.effect("a draft without a validator, a wrong keyword value, an unknown keyword or format, a dangling $ref: refused by the validator's words", () =>
    Effect.gen(function*() {
      const draft4 = yield* refused(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`)
      assert.strictEqual(draft4.reason, "UnsupportedDraft")
      assert.strictEqual(
        draft4.message,
        `--json-schema names $schema "http://json-schema.org/draft-04/schema#", which Keel has no validator for; ` +
          "use draft-07 (the default), 2019-09 or 2020-12"
      )
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`{"type":"object","properties":{"a":{"type":"number","minimum":"x"}}}`, "schema/properties/a/minimum must be number"],
        [`{"type":"object","foo":1}`, `strict mode: unknown keyword: "foo"`],
        [`{"type":"object","properties":{"e":{"type":"string","format":"emial"}}}`, `unknown format "emial" ignored in schema at path "#/properties/e"`],
        [`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`, "can't resolve reference #/$defs/x from id #"]
      ]
      for (const [text, detail] of cases) {
        const error = yield* refused(text)
        assert.strictEqual(error.reason, "NotJsonSchema")
        assert.strictEqual(error.message, `--json-schema is not a valid JSON Schema: ${detail}`)
      }
    }))
})
