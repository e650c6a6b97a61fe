/**
 * The command line of `keel serve`: where to serve (`--stdio`, or `--port N` with `--host`), and
 * every session flag of `keel` (`--model`, `--permission-mode`, `--allowedTools`, `--mcp-config`,
 * ...), parsed by `keel`'s own parser, as the defaults of the sessions the server opens. What a
 * session picks for itself (`--resume`, `--continue`, `--fork-session`, `--session-id`) and what
 * makes no sense for a server (a prompt, `-p`) are refused.
 *
 * @since 0.1.0
 */
import { Command, InvalidArgumentError } from "commander"
import { parseCommand, usageError } from "../CommandLine.js"
import { type Flags, parse } from "../Flags.js"
import type { Transport } from "./Serve.js"

/** The outcome of parsing `keel serve ...`. @category Models */
export type Parsed =
  | { readonly _tag: "Serve"; readonly flags: Flags; readonly transport: Transport }
  | { readonly _tag: "Exit"; readonly code: number; readonly stdout: string; readonly stderr: string }

const port = (value: string): number => {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n > 65535) {
    throw new InvalidArgumentError(`--port must be a port number from 0 to 65535 (0: any free port), got "${value}".`)
  }
  return n
}

/** The commander program of `keel serve` (its own options; the rest go to `keel`'s parser). @category Constructors */
export const program = (): Command =>
  new Command("keel serve")
    .description(
      "Serve the runtime protocol (sessions, turns, the queue; see the README) for an IDE or an app:\n" +
        "over stdio (--stdio: a JSON message a line on stdin, the answers on stdout) or over HTTP\n" +
        "(--port N: POST /rpc with JSON lines; 0 picks a free port, printed as {\"listening\": url})."
    )
    .helpOption("-h, --help", "show this help and exit")
    .option("--stdio", "serve on stdin and stdout", false)
    .option("--port <port>", "serve over HTTP on this port", port)
    .option("--host <host>", "the address to listen on with --port", "127.0.0.1")
    .addHelpText(
      "after",
      "\nEvery session flag of keel --help (--model, --permission-mode, --allowedTools, --tools, --mcp-config,\n" +
        "--max-turns, --max-budget-usd, --fallback-model, --system-prompt, --no-session-persistence, ...) sets\n" +
        "the defaults of the sessions the server opens; session.start's options go over them."
    )
    .allowUnknownOption(true)
    .allowExcessArguments(true)

/**
 * Parses the arguments after `serve`. Usage errors are `Exit` with code 2 and a line saying what is
 * wrong.
 *
 * @category Parsing
 */
export const parseServe = (argv: ReadonlyArray<string>, version: string): Parsed => {
  const cmd = parseCommand(program(), argv, "keel serve")
  if (!(cmd instanceof Command)) return cmd
  const usage = (message: string): Parsed => usageError("keel serve", message)
  const o = cmd.opts<{ stdio: boolean; port?: number; host: string }>()
  if (o.stdio === (o.port !== undefined)) {
    return usage("give one of --stdio (JSON lines on stdin and stdout) or --port <port> (HTTP).")
  }
  const rest = parse(cmd.args, version)
  if (rest._tag === "Exit") return rest
  const { flags } = rest
  if (flags.print || flags.prompt !== undefined) {
    return usage(`takes no prompt and no -p: prompts come as turn.start requests (got ${JSON.stringify(cmd.args)}).`)
  }
  if (
    flags.resume !== undefined || flags.continue || flags.forkSession || flags.resumeSessionAt !== undefined ||
    flags.sessionId !== undefined
  ) {
    return usage(
      "--resume, --continue, --fork-session, --resume-session-at and --session-id are per session: give them to session.start " +
        "(resume, continue, forkSession, sessionId)."
    )
  }
  return {
    _tag: "Serve",
    flags,
    transport: o.stdio ? { _tag: "Stdio" } : { _tag: "Http", port: o.port!, host: o.host }
  }
}
