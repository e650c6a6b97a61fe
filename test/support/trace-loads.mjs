// Preloaded with `node --import` (NODE_OPTIONS) by the start-up tests: records the URL of every
// module the process loads, one a line, in the file named by KEEL_TRACE_LOADS.
import { register } from "node:module"

register("./trace-loads-hooks.mjs", import.meta.url)
