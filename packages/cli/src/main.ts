/**
 * The `keel` entry point: parse flags (without loading the kernel), then run headless.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { parse } from "./Flags.js"

const version = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
  .version

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const exit = (code: number): void => {
  // Leave once stdout has drained; idle keep-alive sockets must not hold the process open.
  process.stdout.write("", () => process.exit(code))
}

const main = async (): Promise<void> => {
  const parsed = parse(process.argv.slice(2), version)
  if (parsed._tag === "Exit") {
    process.stdout.write(parsed.stdout)
    process.stderr.write(parsed.stderr)
    return exit(parsed.code)
  }
  const flags = parsed.flags
  if (!flags.print) {
    process.stderr.write(
      "keel: the interactive REPL is not available yet. Run headless: keel -p \"your prompt\"\nRun keel --help for usage.\n"
    )
    return exit(2)
  }
  const prompt = flags.prompt ?? (process.stdin.isTTY ? undefined : await readStdin())
  if (prompt === undefined || prompt.trim().length === 0) {
    process.stderr.write(
      "keel: no prompt. Give it as an argument (keel -p \"your prompt\") or on stdin (echo \"your prompt\" | keel -p).\n"
    )
    return exit(2)
  }
  const { run } = await import("./Headless.js")
  let interrupt: (() => void) | undefined
  let interrupted = false
  process.on("SIGINT", () => {
    if (interrupted || interrupt === undefined) process.exit(130)
    interrupted = true
    interrupt()
  })
  const code = await run(flags, prompt, {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    onInterruptReady: (f) => (interrupt = f)
  })
  exit(interrupted ? 130 : code)
}

void main()
