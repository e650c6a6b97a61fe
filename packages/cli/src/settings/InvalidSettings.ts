/**
 * The error of settings that cannot be used: a file (or `--settings`) that cannot be read, is not
 * JSON, or holds an invalid value. Its message names the file and the key (`.claude/settings.json:
 * env.FOO must be a string`); the run stops with exit code 2 before anything runs.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** Settings that cannot be used. @category Errors */
export class InvalidSettings extends Schema.TaggedError<InvalidSettings>("@keel/cli/InvalidSettings")("InvalidSettings", {
  message: Schema.String
}) {}
