/**
 * A Schema class's constructor check, compiled once (see {@link constructorCheck}).
 *
 * @internal
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * The constructor check of a Schema class whose fields hold other classes, compiled once. Effect's
 * own check derives the fields' type side anew on every call, and for such fields (a union of block
 * classes) that is a new AST each time, so its parser cache misses and the whole parser is rebuilt:
 * ~120 µs and ~65 KB per message. This is the same check (the same fields, the same defaults, the
 * same `Name (Constructor)` title in its errors), its parser made once; the class is then built
 * with its own check off.
 *
 * @internal
 */
export const constructorCheck = <F extends Schema.Struct.Fields>(identifier: string, fields: F, defaults: object) => {
  // Compiled on the first checked construction, not at start-up (most are unchecked).
  let validate: ((props: unknown) => object) | undefined
  return (props: object, options: Schema.MakeOptions | undefined): any => {
    if (options === true || (typeof options === "object" && options.disableValidation === true)) return props
    validate ??= ParseResult.validateSync(
      Schema.Struct(fields).annotations({ [Symbol.for("effect/annotation/AutoTitle")]: `${identifier} (Constructor)` })
    )
    const out: Record<string, unknown> = { ...props }
    for (const [key, value] of Object.entries(defaults)) if (out[key] === undefined) out[key] = value
    return validate(out)
  }
}
