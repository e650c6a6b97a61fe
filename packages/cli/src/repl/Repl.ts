/**
 * The interactive REPL (`keel` without `-p`): one session, a prompt at a time. The answer streams
 * as Markdown, tool calls are lines with outcome and time, a status line follows each turn
 * (model, context, cost), Ctrl+C interrupts a running turn, and a permission `ask` is a question
 * answered with a key: once, always for this session, or no. Slash commands go to the session
 * (`/help`, `/cost`, `/compact`, `/clear`, `/model`, `/context`), except `/resume` and `/exit`,
 * which the REPL answers. Runs on the same Layer graph as headless mode (`Runtime`).
 *
 * @since 0.1.0
 */
import {
  Commands,
  ContextManagement,
  type Permissions,
  type SdkMessage,
  type Session,
  SessionStore,
  TokenEstimate
} from "@keel/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Flags } from "../Flags.js"
import * as Runtime from "../Runtime.js"
import * as Completion from "./Completion.js"
import * as History from "./History.js"
import * as LineEditor from "./LineEditor.js"
import { blockRenderer, codeHighlighter, MarkdownStream } from "./Markdown.js"
import { Renderer } from "./Renderer.js"
import * as Style from "./Style.js"
import * as ToolLine from "./ToolLine.js"
import * as TurnKeys from "./TurnKeys.js"

/** The terminal the REPL runs in. @category Models */
export interface Terminal {
  readonly input: NodeJS.ReadStream
  readonly output: NodeJS.WriteStream
  readonly env: Readonly<Record<string, string | undefined>>
}

/** The key "always" remembers a call by: a Bash command as written, any other tool by name. */
const alwaysKey = (toolName: string, input: unknown): string => {
  const command = typeof input === "object" && input !== null ? (input as { command?: unknown }).command : undefined
  return toolName === "Bash" && typeof command === "string" ? `Bash(${command.trim()})` : toolName
}

const ago = (ms: number): string => {
  const minutes = Math.round(ms / 60_000)
  return minutes < 1 ? "just now" : minutes < 60 ? `${minutes} min ago` : minutes < 48 * 60
    ? `${Math.round(minutes / 60)} h ago`
    : `${Math.round(minutes / 1440)} days ago`
}

/**
 * Runs the REPL until the user leaves; returns the exit code (0, or 1 when the session could not
 * start, 2 for a configuration problem).
 *
 * @category Running
 */
export const run = async (flags: Flags, version: string, term: Terminal): Promise<number> => {
  const { input, output } = term
  const tty = input.isTTY === true && output.isTTY === true
  const style = Style.make(Style.colorEnabled(output.isTTY, term.env))
  const cwd = process.cwd()
  const write = (text: string) => output.write(text)

  const keys = tty ? TurnKeys.terminal(input) : undefined
  let editor: LineEditor.LineEditor | undefined
  let renderer: Renderer | undefined
  const allowedAlways = new Set<string>()

  // A permission `ask`: the question, then one key (terminal) or one line (pipe).
  const canUseTool: Permissions.CanUseTool = async (toolName, toolInput, { reason, signal }) => {
    const key = alwaysKey(toolName, toolInput)
    if (allowedAlways.has(key)) return { behavior: "allow" }
    const label = ToolLine.describeCall(toolName, toolInput, cwd)
    const say = (text: string) => (renderer !== undefined ? renderer.line(text) : write(`${text}\n`))
    say(`${style.yellow("?")} ${style.bold(`Allow ${label}?`)} ${style.dim(`(${reason})`)}`)
    say(style.dim(`  [y] yes, once   [a] yes, and don't ask again for ${key} this session   [n] no (Esc)`))
    let answer: TurnKeys.Answer
    if (keys !== undefined) {
      answer = await keys.ask(signal)
    } else {
      const line = await editor?.answer?.()
      answer = TurnKeys.ANSWER_KEYS[(line ?? "n").trim().toLowerCase().slice(0, 1)] ?? "deny"
    }
    if (answer === "always") allowedAlways.add(key)
    say(style.dim(`  → ${answer === "deny" ? "denied" : answer === "always" ? `allowed for this session` : "allowed once"}`))
    return answer === "deny"
      ? { behavior: "deny", message: `The user denied ${label}. Ask them what to do instead, or go on without it.` }
      : { behavior: "allow" }
  }

  const options: Runtime.Options = { ...flags, cwd, includePartialMessages: true, canUseTool }
  const runtime = ManagedRuntime.make(Runtime.layer(options))
  const fail = async (exit: Exit.Exit<unknown, unknown>): Promise<number> => {
    if (Exit.isSuccess(exit)) return 0
    const failure = Runtime.describeFailure(exit.cause, flags.debug)
    write(failure.lines.map((line) => `keel: ${line}\n`).join(""))
    await runtime.dispose()
    return failure.code
  }

  // Each session lives in a scope of its own: `/resume` closes the one it leaves.
  let sessionScope = await runtime.runPromise(Scope.make())
  const opened = await runtime.runPromiseExit(Runtime.openSession(options).pipe(Scope.extend(sessionScope)))
  if (Exit.isFailure(opened)) return fail(opened)
  let session: Session.Service = opened.value.session
  const commands = await runtime.runPromise(Commands.Commands)
  for (const warning of opened.value.warnings) write(style.yellow(`keel: ${warning}\n`))
  const home = await runtime.runPromise(ContextManagement.homeConfig)
  const windowOverride = await runtime.runPromise(TokenEstimate.windowConfig)

  const markdown = () =>
    new MarkdownStream(
      blockRenderer({ color: style.color, width: output.columns ?? 80 }),
      codeHighlighter(style.color)
    )
  renderer = new Renderer({
    out: { write, isTTY: tty, columns: () => output.columns ?? 80 },
    style,
    cwd,
    markdown,
    contextWindow: (model) => windowOverride ?? TokenEstimate.windowFor(model),
    now: () => Date.now()
  })
  renderer.setModel(await runtime.runPromise(session.model))

  const promptText = style.bold(style.cyan("› "))
  editor = tty
    ? LineEditor.terminal({
      input,
      output,
      prompt: promptText,
      continuation: style.dim("… "),
      completer: Completion.completer(cwd, commands.commands),
      history: History.load(home),
      onEntry: (entry) => History.append(home, entry),
      exitHint: style.dim("(press Ctrl+C again to exit, or Ctrl+D)")
    })
    : LineEditor.pipe({ input, output, prompt: "" })

  write(
    `${style.bold("Keel")} ${style.dim(`${version} · ${await runtime.runPromise(session.model)} · ${cwd}`)}\n` +
      style.dim("/help for commands · Tab completes · \\ at the end of a line goes on · Ctrl+C interrupts\n")
  )

  // SIGINT from outside (kill -INT, or Ctrl+C when stdin is not a terminal): interrupt the turn, or leave.
  let running = false
  let leaving = false
  const onSignal = () => {
    if (running) void runtime.runPromise(session.interrupt)
    else {
      leaving = true
      editor?.close()
    }
  }
  process.on("SIGINT", onSignal)

  let typedAhead: ReadonlyArray<TurnKeys.Key> = []
  const turn = async (prompt: string) => {
    running = true
    keys?.start(() => void runtime.runPromise(session.interrupt))
    if (!prompt.trim().startsWith("/")) renderer!.waiting()
    try {
      let cleared = false
      await runtime.runPromise(
        session.submit(prompt).pipe(Stream.runForEach((message: SdkMessage.SdkMessage) =>
          Effect.sync(() => {
            if (message.type === "result" && prompt.trim().startsWith("/clear") && !message.is_error) cleared = true
            renderer!.render(message)
          })
        ))
      )
      if (cleared) renderer!.reset()
      renderer!.setModel(await runtime.runPromise(session.model))
    } finally {
      typedAhead = keys?.stop() ?? []
      running = false
    }
  }

  const resume = async (arg: string) => {
    const store = await runtime.runPromise(SessionStore.SessionStore)
    const listed = await runtime.runPromiseExit(store.list(cwd))
    if (Exit.isFailure(listed)) return renderer!.line(style.red("Could not list the saved sessions of this folder."))
    const currentId = await runtime.runPromise(session.sessionId)
    const sessions = listed.value.filter((s) => s.sessionId !== currentId)
    if (arg === "") {
      if (sessions.length === 0) return renderer!.line(style.dim("No other saved sessions in this folder."))
      const now = Date.now()
      renderer!.line(
        sessions.slice(0, 20).map((s, i) =>
          `${style.bold(String(i + 1).padStart(2))}. ${s.sessionId} ${style.dim(ago(now - s.modifiedAt))} ${s.firstPrompt?.replace(/\s+/g, " ").slice(0, 60) ?? ""}`
        ).join("\n") + style.dim("\n/resume <number or id> switches to one.")
      )
      return
    }
    const n = Number(arg)
    const id = Number.isInteger(n) && n >= 1 && n <= sessions.length ? sessions[n - 1]!.sessionId : arg
    const nextScope = await runtime.runPromise(Scope.make())
    const next = await runtime.runPromiseExit(
      Runtime.openSession({ ...options, resume: id, continue: false, forkSession: false, sessionId: undefined }).pipe(
        Scope.extend(nextScope)
      )
    )
    if (Exit.isFailure(next)) {
      await runtime.runPromise(Scope.close(nextScope, Exit.void))
      const failure = Runtime.describeFailure(next.cause, flags.debug)
      return renderer!.line(style.red(failure.lines.join("\n")))
    }
    await runtime.runPromise(Scope.close(sessionScope, Exit.void))
    sessionScope = nextScope
    session = next.value.session
    renderer!.reset()
    renderer!.setModel(await runtime.runPromise(session.model))
    const messages = (await runtime.runPromise(Effect.flatMap(session.state, (state) => Ref.get(state.messages)))).length
    renderer!.line(style.dim(`Resumed session ${await runtime.runPromise(session.sessionId)} (${messages} messages).`))
  }

  // `keel "prompt"` starts with that prompt.
  if (flags.prompt !== undefined && flags.prompt.trim() !== "") {
    write(`${promptText}${flags.prompt}\n`)
    await turn(flags.prompt)
  }
  for (;;) {
    if (leaving) break
    const read = await editor.read(typedAhead)
    typedAhead = []
    if (read._tag === "Exit") break
    const text = read.text.trim()
    if (text === "/exit" || text === "/quit") break
    const resumeCommand = /^\/resume(?:\s+(.*))?$/.exec(text)
    if (resumeCommand !== null) {
      await resume(resumeCommand[1]?.trim() ?? "")
      continue
    }
    await turn(read.text)
    if (/^\/help\b/.test(text)) {
      renderer.line(Completion.REPL_COMMANDS.map((c) =>
        `/${c.name}${c.argumentHint !== undefined ? ` ${c.argumentHint}` : ""}  ${style.dim(c.description)}`
      ).join("\n"))
    }
  }

  process.off("SIGINT", onSignal)
  editor.close()
  write(style.dim(`\nResume this session with: keel --resume ${await runtime.runPromise(session.sessionId)}\n`))
  await runtime.runPromise(Scope.close(sessionScope, Exit.void))
  await runtime.dispose()
  return 0
}
