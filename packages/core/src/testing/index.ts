/**
 * Keel's testing toolkit, `@keel/core/testing`: the scripted model and the deterministic layer
 * and virtual-time helpers to run sessions, turns and resilience layers in tests.
 *
 * @since 0.1.0
 */

/** The deterministic session layer and the virtual-time helpers. */
export * as Testing from "./Testing.js"
/** The scripted model. */
export * as TestModel from "../model/TestModel.js"
/** Runs an effect to its end under `TestClock`, jumping to each sleep when nothing else can run. */
export * as VirtualTime from "./VirtualTime.js"
