/**
 * Saved sessions of any length for the resume row, in keel's real transcript format: keel itself
 * runs a 2-round `bench-loop-2` session, and its own lines are cloned. The transcript is kept as
 * keel wrote it (the first prompt, system prompt, turn envelope and model entries), then its first
 * tool round (assistant tool_use, usage, user tool_result, file_state) repeated `rounds` times with
 * fresh entry uuids chained by `parentUuid`, a fresh tool_use id and the round's own file, then its
 * final answer: 2 + 2 × rounds messages.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { argsFor, run, tmp } from "./clients.js"
import { loopFile } from "../scenario.js"

/** A saved session: its id, and its transcript (to be copied into a home's `projects/<slug>/`). */
export interface Saved {
  readonly sessionId: string
  readonly slug: string
  readonly file: string
}

/** Runs keel's own 2-round loop session in `cwd`; its transcript's path, its folder's slug and its lines. */
const seed = async (url: string, cwd: string) => {
  const home = tmp("seed-home-")
  await run(argsFor("keel", "bench-loop-2"), { url, cwd, env: { KEEL_HOME: home } })
  const [slug] = fs.readdirSync(path.join(home, "projects"))
  const [name] = fs.readdirSync(path.join(home, "projects", slug!))
  const lines = fs.readFileSync(path.join(home, "projects", slug!, name!), "utf8").trim().split("\n").map((l) => JSON.parse(l))
  return { slug: slug!, sessionId: name!.replace(/\.jsonl$/, ""), lines }
}

/** Writes sessions of `2 + 2 × rounds` messages for each of `roundCounts`, from one seed run. */
export const make = async (url: string, cwd: string, roundCounts: ReadonlyArray<number>, files: number): Promise<Array<Saved>> => {
  const { slug, sessionId, lines } = await seed(url, cwd)
  const assistants = lines.flatMap((l, i) => (l.type === "assistant" ? [i] : []))
  if (assistants.length !== 3) throw new Error(`the seed session has ${assistants.length} answers, not 3`)
  const prefix = lines.slice(0, assistants[0])
  const round = JSON.stringify(lines.slice(assistants[0], assistants[1]))
  const end = lines.slice(assistants[2])
  return roundCounts.map((rounds) => {
    const out: Array<any> = [...prefix]
    for (let k = 1; k <= rounds; k++) {
      const file = loopFile(((k - 1) % files) + 1)
      const text = round
        .replaceAll("toolu_bench_1\"", `toolu_bench_${k}"`)
        .replaceAll(loopFile(1), file)
        .replaceAll("file 1, line", `file ${((k - 1) % files) + 1}, line`)
      out.push(...JSON.parse(text))
    }
    out.push(...end.map((l) => ({ ...l })))
    for (let i = prefix.length; i < out.length; i++) {
      out[i] = { ...out[i], uuid: randomUUID(), parentUuid: out[i - 1].uuid }
    }
    const file = path.join(tmp("session-"), `${sessionId}.jsonl`)
    fs.writeFileSync(file, out.map((l) => JSON.stringify(l)).join("\n") + "\n")
    return { sessionId, slug, file }
  })
}

/** A fresh keel home holding `saved` as a session of `slug`'s folder. */
export const homeWith = (saved: Saved): string => {
  const home = tmp("resume-home-")
  const dir = path.join(home, "projects", saved.slug)
  fs.mkdirSync(dir, { recursive: true })
  fs.copyFileSync(saved.file, path.join(dir, `${saved.sessionId}.jsonl`))
  return home
}
