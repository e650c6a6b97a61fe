/**
 * Structured output options of a run: `--json-schema` parsed (and refused without -p), `initialize`'s
 * `jsonSchema` honoured only when it is `--json-schema`'s, `query()`'s `outputFormat` checked.
 */
import { assert, describe, it } from "@effect/vitest"
import { Flags } from "@keel/cli"
import { Effect } from "effect"
import * as Initialize from "../src/Initialize.js"
import * as JsonSchemaOption from "../src/output/JsonSchemaOption.js"

const SCHEMA = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] }

describe("--json-schema", () => {
  it("is taken with -p and with stream-json input (the Agent SDK's way); without either it is a usage error", () => {
    const text = JSON.stringify(SCHEMA)
    const printed = Flags.parse(["-p", "q", "--json-schema", text], "0.0.0")
    assert.strictEqual(printed._tag === "Run" && printed.flags.jsonSchema, text)
    const sdk = Flags.parse(
      ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--json-schema", text],
      "0.0.0"
    )
    assert.strictEqual(sdk._tag === "Run" && sdk.flags.jsonSchema, text)
    const repl = Flags.parse(["--json-schema", text], "0.0.0")
    assert.strictEqual(repl._tag, "Exit")
    if (repl._tag === "Exit") {
      assert.strictEqual(repl.code, 2)
      assert.include(repl.stderr, "--json-schema works with -p")
    }
  })
})

describe("initialize's jsonSchema", () => {
  it("is honoured when it is --json-schema's (key order aside), refused by name otherwise", () => {
    const flag = JSON.stringify({ required: ["answer"], properties: { answer: { type: "number" } }, type: "object" })
    assert.deepStrictEqual(Initialize.unsupported({ subtype: "initialize", jsonSchema: SCHEMA }, { first: true, jsonSchema: flag }), [])
    assert.deepStrictEqual(Initialize.unsupported({ subtype: "initialize" }, { first: true }), [])
    assert.deepStrictEqual(
      Initialize.unsupported({ subtype: "initialize", jsonSchema: { ...SCHEMA, required: [] } }, { first: true, jsonSchema: flag }),
      ["jsonSchema (outputFormat) other than --json-schema's"]
    )
    assert.deepStrictEqual(Initialize.unsupported({ subtype: "initialize", jsonSchema: SCHEMA }, { first: true }), [
      "jsonSchema (outputFormat) without --json-schema (Keel takes the output schema from --json-schema, which the Agent SDK passes with it)"
    ])
  })
})

describe("query()'s outputFormat", () => {
  it.effect("is the schema's JSON text when it is { type: json_schema, schema } with a valid schema; else what is wrong", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* JsonSchemaOption.fromOutputFormat(undefined))
      assert.strictEqual(
        yield* JsonSchemaOption.fromOutputFormat({ type: "json_schema", schema: SCHEMA }),
        JSON.stringify(SCHEMA)
      )
      assert.strictEqual(
        yield* Effect.flip(JsonSchemaOption.fromOutputFormat({ type: "text" })),
        `outputFormat must be { type: "json_schema", schema: <a JSON Schema object> }`
      )
      assert.strictEqual(
        yield* Effect.flip(JsonSchemaOption.fromOutputFormat({ type: "json_schema", schema: { type: "string" } })),
        `outputFormat.schema must describe an object ("type": "object" at its top, got "string"): ` +
          "the answer is the input of a tool call, which is always an object; wrap a single value in a property"
      )
    }))
})
