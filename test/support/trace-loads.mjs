// Preloaded with `node --import` (NODE_OPTIONS) by the start-up tests: records the URL of every
// module the process loads, one a line, in the file named by KEEL_TRACE_LOADS: ES modules through
// the loader hooks, and the CLI bundle's CommonJS chunks, which packages/cli/src/CompileCache.ts
// compiles as `vm.Script`s (with a V8 code cache), by their file URL as each is compiled.
import { appendFileSync } from "node:fs"
import { register, syncBuiltinESMExports } from "node:module"
import { pathToFileURL } from "node:url"
import vm from "node:vm"

register("./trace-loads-hooks.mjs", import.meta.url)

const Script = vm.Script
vm.Script = class extends Script {
  constructor(code, options) {
    if (process.env.KEEL_TRACE_LOADS && typeof options?.filename === "string") {
      appendFileSync(process.env.KEEL_TRACE_LOADS, pathToFileURL(options.filename).href + "\n")
    }
    super(code, options)
  }
}
syncBuiltinESMExports()
