/**
 * JSON Schemas compiled by Ajv (the maintained validator the MCP SDK uses too), one Ajv class per
 * draft: draft-07 (the default), 2019-09 and 2020-12, with the standard formats (`ajv-formats`).
 * Strict as Claude Code's validator: unknown keywords and formats are errors, not ignored. Loaded
 * only when a schema is given (`OutputSchema` imports it on demand): Ajv takes long to load, and a
 * run without an output schema does not pay for it.
 *
 * @since 0.1.0
 */
import { Ajv, type ErrorObject, type Options as AjvOptions } from "ajv"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as AjvFormats from "ajv-formats"

/** The `$schema` URIs (without a trailing `#`) a validator is known for. @category Constants */
export const DRAFTS: ReadonlyArray<string> = [
  "http://json-schema.org/draft-07/schema",
  "https://json-schema.org/draft-07/schema",
  "https://json-schema.org/draft/2019-09/schema",
  "https://json-schema.org/draft/2020-12/schema"
]

const validatorFor = (draft: string | undefined): new(options: AjvOptions) => Ajv =>
  draft?.includes("2020-12") ? Ajv2020 : draft?.includes("2019-09") ? Ajv2019 : Ajv

/**
 * Every error reported (not only the first); nothing logged (a warning would go to stdout or
 * stderr unasked); unknown keywords, unknown formats and ambiguous numbers refused.
 */
const OPTIONS: AjvOptions = {
  allErrors: true,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  logger: false
}

// ajv-formats is CommonJS: its plugin is the module itself under Node, `.default` under some bundlers.
const addFormats = ((AjvFormats as unknown as { readonly default?: unknown }).default ?? AjvFormats) as (
  ajv: Ajv
) => Ajv

/** One problem as `/path: message` (`root: message` at the top). */
const problemOf = (error: ErrorObject): string =>
  `${error.instancePath === "" ? "root" : error.instancePath}: ${error.message ?? error.keyword}`

/** A compiled schema's check: the problems of a value, each once; empty when it matches. @category Models */
export type Check = (value: unknown) => ReadonlyArray<string>

/**
 * Compiles `schema` for its draft (`draft`, one of {@link DRAFTS}; the default when undefined): the
 * check, or what is wrong with the schema (the meta-schema's complaint, or the compiler's: an unknown
 * keyword or format, a `$ref` that resolves nowhere).
 *
 * @category Compiling
 */
export const compile = (
  schema: Readonly<Record<string, unknown>>,
  draft: string | undefined
): { readonly _tag: "Compiled"; readonly check: Check } | { readonly _tag: "Invalid"; readonly detail: string } => {
  const ajv = addFormats(new (validatorFor(draft))(OPTIONS))
  if (ajv.validateSchema(schema) !== true) {
    return { _tag: "Invalid", detail: ajv.errorsText(ajv.errors, { dataVar: "schema" }) }
  }
  try {
    const validate = ajv.compile(schema)
    return {
      _tag: "Compiled",
      check: (value) => (validate(value) ? [] : [...new Set((validate.errors ?? []).map(problemOf))])
    }
  } catch (error) {
    return { _tag: "Invalid", detail: error instanceof Error ? error.message : String(error) }
  }
}
