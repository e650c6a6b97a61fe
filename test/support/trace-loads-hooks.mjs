// Module loader hooks (see trace-loads.mjs): append each loaded module's URL to $KEEL_TRACE_LOADS.
import { appendFileSync } from "node:fs"

export async function load(url, context, nextLoad) {
  if (process.env.KEEL_TRACE_LOADS) appendFileSync(process.env.KEEL_TRACE_LOADS, url + "\n")
  return nextLoad(url, context)
}
