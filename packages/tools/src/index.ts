/**
 * Keel's built-in tools.
 *
 * @since 0.1.0
 */

/** The built-in tool set. */
export * as BuiltinTools from "./BuiltinTools.js"
/** The Read tool. */
export * as Read from "./Read.js"
