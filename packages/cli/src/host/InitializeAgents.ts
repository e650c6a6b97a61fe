/**
 * The agents of a host's first-line `initialize` (the Claude Agent SDK's `agents` option): they
 * shape the session itself (`Task`'s agent types and the `system`/`init` list are fixed when the
 * tools are built), so they are read before the session is (`HostStartup` waits for that line).
 *
 * @since 0.1.0
 */

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Whether a value of the request sets something (not absent, `null`, or an empty object). */
const isSet = (value: unknown): boolean => value !== undefined && value !== null && !(isRecord(value) && Object.keys(value).length === 0)

/**
 * The run options a first-line `initialize` sets: its `agents`.
 *
 * @category Reading
 */
export const runOptions = (
  initialize: Readonly<Record<string, unknown>> | undefined
): { readonly agents?: unknown; readonly agentsOrigin?: string } =>
  initialize !== undefined && isSet(initialize.agents) ? { agents: initialize.agents, agentsOrigin: "initialize agents" } : {}

/**
 * Why a first-line `initialize` cannot be used with these flags, if it cannot: its `agents` and
 * `--agents` both define agents (give them in one place).
 *
 * @category Reading
 */
export const conflict = (
  initialize: Readonly<Record<string, unknown>> | undefined,
  flags: { readonly agents?: string | undefined }
): string | undefined =>
  flags.agents !== undefined && runOptions(initialize).agents !== undefined
    ? "--agents and the initialize request's agents both define agents; give them in one place"
    : undefined
