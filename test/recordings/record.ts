/**
 * Records the regression corpus (`npx tsx test/recordings/record.ts [name ...]`): runs each case of
 * `cases.ts` with `keel -p --record` (the built bundle: `npm run build` first) against the loopback
 * fake, in a fresh folder, and copies its journal and transcript here as `<name>.journal` and
 * `<name>.jsonl`. Re-recording a case is how an intended change to what Keel sends is accepted:
 * review the journal's diff (`git diff test/recordings`), then commit it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { cases } from "./cases.js"
import { closeServers, envFor, fake, run, workdir } from "../support/KeelProcess.js"

const here = import.meta.dirname
const only = process.argv.slice(2)
for (const c of cases.filter((c) => only.length === 0 || only.includes(c.name))) {
  const dir = workdir()
  for (const [name, text] of Object.entries(c.files)) fs.writeFileSync(path.join(dir, name), text)
  const home = path.join(dir, ".keel-home")
  const server = await fake(c.script)
  const r = await run([...c.args, "--record", "--output-format", "json"], { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir })
  if (r.code !== 0) throw new Error(`${c.name}: keel exited ${r.code}: ${r.stderr}`)
  const folder = fs.readdirSync(path.join(home, "projects")).map((p) => path.join(home, "projects", p))[0]!
  const journal = fs.readdirSync(folder).find((f) => f.endsWith(".journal"))!
  fs.copyFileSync(path.join(folder, journal), path.join(here, `${c.name}.journal`))
  fs.copyFileSync(path.join(folder, journal.replace(/\.journal$/, ".jsonl")), path.join(here, `${c.name}.jsonl`))
  console.log(`recorded ${c.name}: ${server.requests.length} requests`)
}
await closeServers()
