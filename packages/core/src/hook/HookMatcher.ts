/**
 * Hook matchers as Claude Code reads them: empty, absent or `*` matches everything; a matcher of
 * only letters, digits, `_` and `|` is a list of exact names (`Bash`, `Edit|Write`); anything else
 * is a regular expression tested against the name (`mcp__memory__.*`, `Notebook.*`), MCP tools
 * being named `mcp__<server>__<tool>`.
 *
 * @since 0.1.0
 */

const EXACT = /^[A-Za-z0-9_|]+$/

/** Why `matcher` cannot be used (an invalid regular expression), or `undefined`. @category Checking */
export const problem = (matcher: string | undefined): string | undefined => {
  if (matcher === undefined || matcher === "" || matcher === "*" || EXACT.test(matcher)) return undefined
  try {
    new RegExp(matcher)
    return undefined
  } catch (e) {
    return `not a valid regular expression (${e instanceof Error ? e.message : String(e)})`
  }
}

/**
 * Whether `matcher` matches `query` (a tool name, a session source...). An event without a
 * matcher query (`undefined`) matches every matcher.
 *
 * @category Matching
 */
export const matches = (matcher: string | undefined, query: string | undefined): boolean => {
  if (query === undefined || matcher === undefined || matcher === "" || matcher === "*") return true
  if (EXACT.test(matcher)) return matcher.split("|").some((name) => name.trim() === query)
  try {
    return new RegExp(matcher).test(query)
  } catch {
    return false
  }
}
