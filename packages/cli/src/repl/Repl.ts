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
import { Commands, ContextManagement, type SdkMessage, TokenEstimate } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Flags } from "../Flags.js"
import * as Runtime from "../Runtime.js"
import * as Completion from "./Completion.js"
import * as History from "./History.js"
import * as LineEditor from "./LineEditor.js"
import { blockRenderer, codeHighlighter, MarkdownStream } from "./Markdown.js"
import { Renderer } from "./Renderer.js"
import * as PermissionPrompt from "./PermissionPrompt.js"
import * as ResumeCommand from "./ResumeCommand.js"
import * as Style from "./Style.js"
import * as TurnKeys from "./TurnKeys.js"

/** The terminal the REPL runs in. @category Models */
export interface Terminal {
  readonly input: NodeJS.ReadStream
  readonly output: NodeJS.WriteStream
  readonly env: Readonly<Record<string, string | undefined>>
}

/** The renderer of the session's messages on `term`'s output. */
const makeRenderer = (term: Terminal, style: Style.Style, cwd: string, windowOverride: number | undefined) =>
  new Renderer({
    out: {
      write: (text) => term.output.write(text),
      isTTY: term.input.isTTY === true && term.output.isTTY === true,
      columns: () => term.output.columns ?? 80
    },
    style,
    cwd,
    markdown: () =>
      new MarkdownStream(
        blockRenderer({ color: style.color, width: term.output.columns ?? 80 }),
        codeHighlighter(style.color)
      ),
    contextWindow: (model) => windowOverride ?? TokenEstimate.windowFor(model),
    now: () => Date.now()
  })

/** The REPL's own `/help` lines, after the session's. */
const helpLines = (style: Style.Style) =>
  Completion.REPL_COMMANDS.map((c) =>
    `/${c.name}${c.argumentHint !== undefined ? ` ${c.argumentHint}` : ""}  ${style.dim(c.description)}`
  ).join("\n")

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
  const canUseTool = PermissionPrompt.make({
    style,
    cwd,
    keys,
    say: (text) => (renderer !== undefined ? renderer.line(text) : write(`${text}\n`)),
    line: async () => editor?.answer?.()
  })

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
  const sessionScope = await runtime.runPromise(Scope.make())
  const opened = await runtime.runPromiseExit(Runtime.openSession(options).pipe(Scope.extend(sessionScope)))
  if (Exit.isFailure(opened)) return fail(opened)
  const current: ResumeCommand.Current = { scope: sessionScope, session: opened.value.session }
  for (const warning of opened.value.warnings) write(style.yellow(`keel: ${warning}\n`))
  const home = await runtime.runPromise(ContextManagement.homeConfig)
  const windowOverride = await runtime.runPromise(TokenEstimate.windowConfig)

  renderer = makeRenderer(term, style, cwd, windowOverride)
  renderer.setModel(await runtime.runPromise(current.session.model))

  const promptText = style.bold(style.cyan("› "))
  editor = tty
    ? LineEditor.terminal({
      input,
      output,
      prompt: promptText,
      continuation: style.dim("… "),
      completer: Completion.completer(cwd, (await runtime.runPromise(Commands.Commands)).commands),
      history: History.load(home),
      onEntry: (entry) => History.append(home, entry),
      exitHint: style.dim("(press Ctrl+C again to exit, or Ctrl+D)")
    })
    : LineEditor.pipe({ input, output, prompt: "" })

  write(
    `${style.bold("Keel")} ${style.dim(`${version} · ${await runtime.runPromise(current.session.model)} · ${cwd}`)}\n` +
      style.dim("/help for commands · Tab completes · \\ at the end of a line goes on · Ctrl+C interrupts\n")
  )

  // SIGINT from outside (kill -INT, or Ctrl+C when stdin is not a terminal): interrupt the turn, or leave.
  let running = false
  let leaving = false
  const onSignal = () => {
    if (running) void runtime.runPromise(current.session.interrupt)
    else {
      leaving = true
      editor?.close()
    }
  }
  process.on("SIGINT", onSignal)

  let typedAhead: ReadonlyArray<TurnKeys.Key> = []
  const turn = async (prompt: string) => {
    running = true
    keys?.start(() => void runtime.runPromise(current.session.interrupt))
    if (!prompt.trim().startsWith("/")) renderer!.waiting()
    try {
      let cleared = false
      await runtime.runPromise(
        current.session.submit(prompt).pipe(Stream.runForEach((message: SdkMessage.SdkMessage) =>
          Effect.sync(() => {
            if (message.type === "result" && prompt.trim().startsWith("/clear") && !message.is_error) cleared = true
            renderer!.render(message)
          })
        ))
      )
      if (cleared) renderer!.reset()
      renderer!.setModel(await runtime.runPromise(current.session.model))
    } finally {
      typedAhead = keys?.stop() ?? []
      running = false
    }
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
      await ResumeCommand.run(resumeCommand[1]?.trim() ?? "", {
        runtime, options, debug: flags.debug, cwd, style, renderer, current
      })
      continue
    }
    await turn(read.text)
    if (/^\/help\b/.test(text)) {
      renderer.line(helpLines(style))
    }
  }

  process.off("SIGINT", onSignal)
  editor.close()
  write(style.dim(`\nResume this session with: keel --resume ${await runtime.runPromise(current.session.sessionId)}\n`))
  await runtime.runPromise(Scope.close(current.scope, Exit.void))
  await runtime.dispose()
  return 0
}
