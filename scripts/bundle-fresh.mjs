#!/usr/bin/env node
/**
 * Whether the CLI's bundle (packages/cli/bundle, esbuild over dist/) is newer than everything it is
 * built from: exit 0 if so, 1 if it must be rebuilt. `npm run build` rebundles only when this
 * fails, so a build with nothing changed (the second and third builds of a CI run: `npm ci` runs
 * `prepare`, `npm test` builds) does not redo the bundle.
 *
 * Its inputs: every file tsc wrote under packages/{core,tools,cli}/dist, the installed dependencies
 * (node_modules/.package-lock.json, rewritten by each install) and the bundle command itself
 * (packages/cli/package.json, packages/cli/scripts/bundle.mjs). The bundle is fresh when its oldest file is newer than the newest
 * input.
 *
 *   node scripts/bundle-fresh.mjs || npm run bundle -w @keel/cli
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** The modification times of the files under `dir` (recursively); none when it does not exist. */
const times = (dir) => {
  const entries = fs.readdirSync(dir, { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile()).map((e) => fs.statSync(path.join(e.parentPath ?? e.path, e.name)).mtimeMs)
}

const fresh = () => {
  const outputs = times(path.join(ROOT, "packages", "cli", "bundle"))
  if (!outputs.some(() => true) || !fs.existsSync(path.join(ROOT, "packages", "cli", "bundle", "main.cjs"))) return false
  const inputs = [
    ...["core", "tools", "cli"].flatMap((p) => times(path.join(ROOT, "packages", p, "dist"))),
    fs.statSync(path.join(ROOT, "node_modules", ".package-lock.json")).mtimeMs,
    fs.statSync(path.join(ROOT, "packages", "cli", "package.json")).mtimeMs,
    fs.statSync(path.join(ROOT, "packages", "cli", "scripts", "bundle.mjs")).mtimeMs
  ]
  return Math.max(...inputs) < Math.min(...outputs)
}

let ok = false
try {
  ok = fresh()
} catch {
  // A missing folder or file: not fresh.
}
if (ok) console.log("bundle: up to date")
process.exit(ok ? 0 : 1)
