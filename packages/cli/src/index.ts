/**
 * The keel command line, as a library: flag parsing and headless runs.
 *
 * @since 0.1.0
 */

/** Flag parsing. */
export * as Flags from "./Flags.js"
/** Headless runs. */
export * as Headless from "./Headless.js"
/** The Layer graph and session every way of running shares. */
export * as Runtime from "./Runtime.js"
export * as RunModel from "./RunModel.js"
/** The embedding facade: `query()` in the Claude Agent SDK's shape, for programs that do not use Effect. */
export * as Query from "./query/Query.js"
export { query, QueryError } from "./query/Query.js"
