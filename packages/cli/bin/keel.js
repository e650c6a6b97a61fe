#!/usr/bin/env node
// The keel command. The flag parser loads first; the kernel only when a run needs it. The bundle
// (one file per chunk, built by esbuild after tsc) starts about 3x faster than the same modules
// loaded one by one from node_modules; dist/ is the fallback when it has not been built.
import { existsSync } from "node:fs"

const bundled = new URL("../bundle/main.js", import.meta.url)
import(existsSync(bundled) ? bundled.href : "../dist/main.js")
