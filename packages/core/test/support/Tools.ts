/**
 * Tools for tests: `Sleep` waits `ms` under `Clock` (so `TestClock` drives it) and says so.
 */
import { Tool } from "@keel/core"
import { Effect, Schema } from "effect"

/** `Sleep` (`ms`): sleeps under `Clock`, then returns `slept <ms>`. */
export const sleeper = Tool.make({
  name: "Sleep",
  description: "Sleeps",
  input: Schema.Struct({ ms: Schema.Number }),
  isReadOnly: true,
  call: (input) => Effect.as(Effect.sleep(input.ms), `slept ${input.ms}`)
})
