#!/usr/bin/env node
// The keel command. The flag parser loads first; the kernel only when a run needs it. The bundle
// (CommonJS chunks built by scripts/bundle.mjs after tsc) is compiled through a V8 code cache
// (bundle/CompileCache.js): it starts several times faster than the same modules loaded one by one
// from node_modules. dist/ is the fallback when it has not been built.
import { existsSync } from "node:fs"

const bundled = new URL("../bundle/main.cjs", import.meta.url)
if (existsSync(bundled)) {
  const { load } = await import("../bundle/CompileCache.js")
  load(bundled)
} else {
  await import("../dist/main.js")
}
