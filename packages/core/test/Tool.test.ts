import { assert, describe, it } from "@effect/vitest"
import { Tool, ToolRegistry } from "@keel/core"
import { Effect, Schema } from "effect"

const define = (input: Schema.Schema<any, any>) =>
  Tool.toDefinition(Tool.make({ name: "T", description: "d", input, isReadOnly: true, call: () => Effect.succeed("") }))

interface Node {
  readonly name: string
  readonly children: ReadonlyArray<Node>
}
const Node: Schema.Schema<Node> = Schema.Struct({
  name: Schema.String,
  children: Schema.Array(Schema.suspend((): Schema.Schema<Node> => Node))
}).annotations({ identifier: "Node" })

describe("Tool.toDefinition", () => {
  it("inlines refined schemas (no $ref, no $defs, no generated titles)", () => {
    const def = define(Schema.Struct({
      n: Schema.Int.pipe(Schema.positive()).annotations({ description: "a count" }),
      list: Schema.Array(Schema.Struct({ at: Schema.Int }))
    }))
    assert.deepStrictEqual(def.input_schema, {
      type: "object",
      required: ["n", "list"],
      properties: {
        n: { type: "integer", description: "a count", exclusiveMinimum: 0 },
        list: {
          type: "array",
          items: {
            type: "object",
            required: ["at"],
            properties: { at: { type: "integer", description: "an integer" } },
            additionalProperties: false
          }
        }
      },
      additionalProperties: false
    })
  })

  it("keeps $ref and $defs for recursive schemas", () => {
    const def = define(Schema.Struct({ root: Node }))
    const root = (def.input_schema.properties as any).root
    assert.strictEqual(root.properties.children.items.$ref, "#/$defs/Node")
    assert.isDefined((def.input_schema as any).$defs.Node)
  })

  it("isConcurrencySafe defaults to isReadOnly; predicates see the input", () => {
    const tool = Tool.make({
      name: "T",
      description: "d",
      input: Schema.Struct({ write: Schema.Boolean }),
      isReadOnly: (input) => !input.write,
      call: () => Effect.succeed("")
    })
    assert.isTrue(tool.isConcurrencySafe({ write: false }))
    assert.isFalse(tool.isConcurrencySafe({ write: true }))
  })
})

describe("ToolRegistry.definitions", () => {
  it("a tool's definition is made once: a registry with tools appended reuses those of the tools below", () => {
    const tool = (name: string) =>
      Tool.make({ name, description: name, input: Schema.Struct({ x: Schema.String }), isReadOnly: true, call: () => Effect.succeed("") })
    const a = tool("A")
    const below = ToolRegistry.make([a])
    const appended = ToolRegistry.make([...below.tools, tool("B")])
    assert.strictEqual(appended.definitions[0], below.definitions[0])
    assert.deepStrictEqual(appended.definitions.map((d) => d.name), ["A", "B"])
    assert.deepStrictEqual(below.definitions[0], Tool.toDefinition(a))
  })
})
