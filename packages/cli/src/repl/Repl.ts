/**
 * The interactive REPL (`keel` without `-p`): one session, whose turns all go through its runtime
 * (`TurnQueue` over `SessionRuntime`). In a terminal the input line stays open under the output
 * (`Screen`, `TerminalInput`): a prompt entered while a turn runs is queued and listed under the
 * line, ↑ on an empty line pulls the last one back for editing, Esc drops it; turns print whole, in
 * the order they run. The answer streams as Markdown, tool calls are lines with outcome and time,
 * a live working line counts the turn's time and output tokens (a retry counts down in its place),
 * a status line follows each turn and command (model, context, cost), Esc or Ctrl+C interrupts the
 * running turn (what is queued runs next), and a permission `ask` is a question answered with a
 * key. Slash commands go to the session (`/cost`, `/compact`, `/clear`, `/model`, `/context`,
 * `/init`), except `/resume`, `/exit`, `/help` (the session's commands and the REPL's in one list)
 * and the setup commands (`/status`, `/permissions`, `/mcp`, `/memory`: see `LocalCommands`), which
 * the REPL answers when their turn comes. From a pipe, each line is a prompt, run to its end before
 * the next is read. In a folder the user has not trusted yet, it first
 * asks whether to (`TrustPrompt`). Runs on the same Layer graph as headless mode (`Runtime`).
 *
 * @since 0.1.0
 */
import { Commands, ContextManagement, Permissions, type SdkMessage, type Session, SlashCommand, TokenEstimate } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as ActionAnswerer from "../ActionAnswerer.js"
import type { Flags } from "../Flags.js"
import * as Runtime from "../Runtime.js"
import * as Signals from "../Signals.js"
import * as Completion from "./Completion.js"
import * as Footer from "./Footer.js"
import * as Editor from "./Editor.js"
import * as History from "./History.js"
import * as LastOutput from "./LastOutput.js"
import * as LineEditor from "./LineEditor.js"
import * as LocalCommands from "./LocalCommands.js"
import { blockRenderer, codeHighlighter, MarkdownStream } from "./Markdown.js"
import * as PermissionMode from "./PermissionMode.js"
import * as PermissionPrompt from "./PermissionPrompt.js"
import { Renderer } from "./Renderer.js"
import * as ResumeCommand from "./ResumeCommand.js"
import * as Screen from "./Screen.js"
import * as ShellCommand from "./ShellCommand.js"
import * as ShellMode from "./ShellMode.js"
import * as SlashMenu from "./SlashMenu.js"
import * as Style from "./Style.js"
import * as TerminalInput from "./TerminalInput.js"
import * as TrustPrompt from "./TrustPrompt.js"
import * as TurnQueue from "./TurnQueue.js"

/** The terminal the REPL runs in. @category Models */
export interface Terminal {
  readonly input: NodeJS.ReadStream
  readonly output: NodeJS.WriteStream
  readonly env: Readonly<Record<string, string | undefined>>
}

/** The renderer of the session's messages on `term`'s output (above the live area, on a live screen). */
const makeRenderer = (
  term: Terminal,
  style: Style.Style,
  cwd: string,
  windowOverride: number | undefined,
  screen: Screen.Screen | undefined
) =>
  new Renderer({
    out: {
      write: (text) => (screen !== undefined ? screen.write(text) : term.output.write(text)),
      isTTY: term.input.isTTY === true && term.output.isTTY === true,
      columns: () => term.output.columns ?? 80,
      live: screen === undefined ? undefined : {
        partial: (text) => screen.set({ partial: text }),
        status: (text) => screen.set({ status: text })
      }
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

/** `/help` in the REPL: the session's commands and the REPL's own, in one aligned list. */
const helpText = (commands: ReadonlyArray<SlashCommand.Command>): string =>
  SlashCommand.help([...commands, ...Completion.REPL_COMMANDS])

/** What the REPL's turns print with. */
interface Printing {
  readonly renderer: Renderer
  readonly screen: Screen.Screen | undefined
  readonly style: Style.Style
  /** The session the REPL is in (`/resume` moves to another). */
  readonly session: () => Session.Service
  /** The prompt as echoed when its turn starts (a terminal's input line does not keep it); `undefined` from a pipe, which echoes as it reads. */
  readonly echo: ((text: string) => string) | undefined
  readonly columns: () => number
  readonly leave: () => void
  /** Runs `/resume arg`; moves the REPL to the session it opened, if it did. */
  readonly resume: (arg: string, queue: TurnQueue.TurnQueue) => Effect.Effect<string>
  /** The session's commands (`/help` lists them with the REPL's own). */
  readonly commands: ReadonlyArray<SlashCommand.Command>
  /** The answer to one of the REPL's setup commands (`/status`, `/permissions`, ...), if `text` is one. */
  readonly local: (text: string) => Effect.Effect<string> | undefined
}

/** How the REPL prints its turns and answers its own commands (`/exit`, `/resume`). */
const hooks = (p: Printing, firstSessionId: string, firstModel: string): TurnQueue.Hooks => {
  const { renderer, screen, style } = p
  // The session the figures of the status line are from: a new one (`/clear`, `/resume`) resets them.
  let shownSession = firstSessionId
  // The session's model at the last turn's end: the status line shows a new one (`/model`).
  let sessionModel = firstModel
  const output = (content: string) =>
    Effect.map(p.session().sessionId, (session_id): Array<SdkMessage.SdkMessage> => [{
      type: "system",
      subtype: "local_command_output",
      content,
      uuid: crypto.randomUUID(),
      session_id
    }])
  return {
    started: (text) => {
      if (p.echo !== undefined && text !== undefined) renderer.line(p.echo(ShellCommand.shown(text)))
      if (text === undefined || !text.trim().startsWith("/")) renderer.waiting()
    },
    render: (message) => (screen !== undefined ? screen.batch(() => renderer.render(message)) : renderer.render(message)),
    ended: (text, result) =>
      Effect.gen(function*() {
        renderer.idle()
        const command = text?.trim() ?? ""
        if (result === undefined && !isReplCommand(command)) renderer.line(style.red("The turn ended without a result."))
        const session = p.session()
        const id = yield* session.sessionId
        if (id !== shownSession) {
          renderer.reset()
          // A resumed conversation's context, estimated until its next response reports it.
          renderer.setContextTokens(TokenEstimate.ofMessages(yield* Effect.flatMap(session.state, (s) => s.messages.get)))
        }
        const model = yield* session.model
        if (model !== sessionModel || id !== shownSession) renderer.setModel(model)
        shownSession = id
        sessionModel = model
        // After every turn and command but /exit: the figures a command changed (/compact, /model, /clear, /resume) show at once.
        if (!/^\/(exit|quit)\b/.test(command)) renderer.statusLine()
      }),
    queued: (previews) => screen?.set({ queued: Footer.queuedRows(previews.map(ShellCommand.shown), p.columns(), style) }),
    refused: (_, reason) => renderer.line(style.red(`Not queued: ${reason}`)),
    reply: (text, queue) => {
      const command = text.trim()
      if (command === "/exit" || command === "/quit") return Effect.sync(() => (p.leave(), []))
      if (/^\/help\b/.test(command)) return output(helpText(p.commands))
      const resume = /^\/resume(?:\s+(.*))?$/.exec(command)
      const answer = resume !== null ? p.resume(resume[1]?.trim() ?? "", queue) : p.local(command)
      if (answer === undefined) return undefined
      return Effect.flatMap(answer, output)
    }
  }
}

/** From a pipe: each prompt (`first`, then a line each) runs to its end before the next is read. */
const readPipe = async (
  pipe: LineEditor.LineEditor,
  queue: TurnQueue.TurnQueue,
  first: string | undefined,
  leaving: () => boolean
): Promise<void> => {
  if (first !== undefined) await queue.submit(first)
  while (!leaving()) {
    const read = await pipe.read()
    if (read._tag === "Exit") break
    await queue.submit(read.text)
  }
  pipe.close()
}

const isReplCommand = (command: string) => /^\/(exit|quit|resume|help|status|permissions|mcp|memory)\b/.test(command)

/**
 * Runs the REPL until the user leaves; returns the exit code (0, or 1 when the session could not
 * start, 2 for a configuration problem, 3 when the session is in use, 143 or 129 after SIGTERM or SIGHUP).
 *
 * @category Running
 */
export const run = async (flags: Flags, version: string, term: Terminal): Promise<number> => {
  const { input, output } = term
  const tty = input.isTTY === true && output.isTTY === true
  const style = Style.make(Style.colorEnabled(output.isTTY, term.env))
  const cwd = process.cwd()
  // Nothing of the folder (settings, hooks, MCP servers, git) is read before the user trusts it.
  if (!(await TrustPrompt.ensureTrusted(term, style, Effect.runSync(ContextManagement.homeConfig), cwd))) return 1
  const screen = tty
    ? Screen.make({ write: (text) => output.write(text), columns: () => output.columns ?? 80, rows: () => output.rows ?? 24 })
    : undefined
  const write = (text: string) => (screen !== undefined ? screen.write(text) : output.write(text))

  let keys: TerminalInput.TerminalInput | undefined
  let pipe: LineEditor.LineEditor | undefined
  let renderer: Renderer | undefined
  const canUseTool = PermissionPrompt.make({
    style,
    cwd,
    keys: tty ? { ask: (signal) => keys!.ask(signal), reason: (prompt, signal) => keys!.reason(prompt, signal) } : undefined,
    say: (text) => (renderer !== undefined ? renderer.line(text) : write(`${text}\n`)),
    line: async () => pipe?.answer(),
    calls: () => renderer
  })

  // The prompt answers the session's pending actions (permission asks), as any front end does.
  const options: Runtime.Options = { ...flags, cwd, includePartialMessages: true, askThroughActions: true }
  const runtime = ManagedRuntime.make(Runtime.layer(options))
  const answering = runtime.runFork(Effect.scoped(Effect.zipRight(ActionAnswerer.answerWith(canUseTool), Effect.never)))
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
  let current: ResumeCommand.Current = { scope: sessionScope, session: opened.value.session }
  for (const warning of opened.value.warnings) write(style.yellow(`keel: ${warning}\n`))
  const home = await runtime.runPromise(ContextManagement.homeConfig)
  const windowOverride = await runtime.runPromise(TokenEstimate.windowConfig)

  renderer = makeRenderer(term, style, cwd, windowOverride, screen)
  renderer.setModel(await runtime.runPromise(current.session.model))
  const promptText = style.bold(style.cyan("› "))
  const continuation = style.dim("… ")

  write(
    `${style.bold("Keel")} ${style.dim(`${version} · ${await runtime.runPromise(current.session.model)} · ${cwd}`)}\n` +
      style.dim("/ commands · ! shell · Shift+Tab permission mode · Ctrl+O last tool output · Ctrl+C interrupts\n")
  )

  let leaving = false
  let leave = () => {}
  const left = new Promise<void>((resolve) => {
    leave = () => {
      leaving = true
      resolve()
    }
  })
  const resume = (arg: string, queue: TurnQueue.TurnQueue) =>
    Effect.gen(function*() {
      const outcome = yield* Effect.promise(() =>
        ResumeCommand.run(arg, { runtime, options, debug: flags.debug, cwd, style, current })
      )
      if (outcome.opened !== undefined) {
        const left = current
        current = outcome.opened
        yield* queue.switchTo(current.session, Scope.close(left.scope, Exit.void))
      }
      return outcome.text
    })
  const turnsScope = await runtime.runPromise(Scope.make())
  const printing: Printing = {
    renderer,
    screen,
    style,
    session: () => current.session,
    echo: tty ? (text) => text.split("\n").map((line, i) => `${i === 0 ? promptText : continuation}${line}`).join("\n") : undefined,
    columns: () => output.columns ?? 80,
    leave,
    resume,
    commands: (await runtime.runPromise(Commands.Commands)).commands,
    local: (text) => {
      const answer = LocalCommands.answer(text, {
        version,
        cwd,
        style,
        session: current.session,
        options,
        env: process.env,
        edit: screen !== undefined ? Editor.edit({ input, redraw: () => screen.redraw() }) : undefined
      })
      return answer === undefined ? undefined : Effect.promise(() => runtime.runPromise(answer))
    }
  }
  // Ctrl+O prints the last tool call's whole output (see LastOutput for why it prints rather than toggles).
  const lastOutput = LastOutput.make(cwd)
  const firstModel = await runtime.runPromise(current.session.model)
  const printingHooks = hooks(printing, await runtime.runPromise(current.session.sessionId), firstModel)
  const queue = await runtime.runPromise(
    TurnQueue.make(current.session, {
      ...printingHooks,
      render: (message) => (lastOutput.observe(message), printingHooks.render(message))
    }).pipe(Scope.extend(turnsScope))
  )
  const shell = ShellMode.make({ cwd, timeoutMs: ShellCommand.timeoutFrom(term.env), style, line: (text) => renderer!.line(text) })

  // SIGINT from outside (kill -INT, or Ctrl+C when stdin is not a terminal): interrupt the turn, or leave.
  const onSignal = () => (queue.running() ? queue.interrupt() : leave())
  process.on("SIGINT", onSignal)
  // SIGTERM, SIGHUP (the terminal went away): stop the turn and leave as /exit does; the process
  // then exits 143 or 129, within Signals.GRACE_MS (a second signal exits at once).
  const terminate = Signals.install(() => {
    if (queue.running()) queue.interrupt()
    leave()
    pipe?.close()
  }, ["SIGTERM", "SIGHUP"])

  // `keel "prompt"` starts with that prompt.
  const first = flags.prompt !== undefined && flags.prompt.trim() !== "" ? flags.prompt : undefined
  if (screen !== undefined) {
    // Shift+Tab switches the session's permission policy itself: the next tool calls are checked in the new mode.
    const permissions = await runtime.runPromise(Permissions.Permissions)
    const bypassAllowed = permissions.config.mode === "bypassPermissions" || permissions.config.bypassAvailable === true
    const commands = (await runtime.runPromise(Commands.Commands)).commands
    keys = TerminalInput.make({
      input,
      screen,
      prompt: promptText,
      continuation,
      completer: Completion.completer(cwd, commands),
      menu: SlashMenu.items([...commands, ...Completion.REPL_COMMANDS]),
      modeRow: () => PermissionMode.indicator(permissions.config.mode, style),
      shellHint: `${style.bold(style.magenta("!"))} ${style.dim("shell mode: runs here, its output goes to the conversation")}`,
      style,
      columns: () => output.columns ?? 80,
      history: History.load(home),
      onEntry: (entry) => History.append(home, entry),
      exitHint: style.dim("(press Ctrl+C again to exit, or Ctrl+D)"),
      droppedNote: style.dim("(queued prompt dropped)"),
      list: (candidates) => renderer!.line(style.dim(candidates.join("  "))),
      handlers: {
        submit: (text) => {
          const command = ShellCommand.commandOf(text)
          if (command !== undefined && command !== "") return void shell.run(command)
          void queue.submit(text.trim().startsWith("/") ? text : shell.withContext(text))
        },
        interrupt: () => (shell.running() ? shell.interrupt() : queue.interrupt()),
        pullBack: queue.pullBack,
        exit: leave,
        situation: () => ({ running: queue.running() || shell.running(), queued: queue.queued() }),
        cycleMode: () =>
          runtime.runPromise(
            permissions.setMode(PermissionMode.next(permissions.config.mode, bypassAllowed)).pipe(
              Effect.catchTag("ModeRefused", (refused) => Effect.sync(() => renderer!.line(style.red(refused.message))))
            )
          ),
        expand: () => {
          const last = lastOutput.last()
          if (last === undefined) return renderer!.line(style.dim("No tool output yet."))
          const body = last.text === "" ? style.dim("(no output)") : last.text.replace(/\n$/, "")
          renderer!.line(`${style.dim("⎿ whole output of")} ${style.bold(last.label)}\n${last.error ? style.red(body) : body}`)
        }
      }
    })
    keys.start()
    if (first !== undefined) void queue.submit(first)
    await left
    keys.close()
  } else {
    pipe = LineEditor.pipe({ input, output, prompt: "" })
    if (first !== undefined) write(`${promptText}${first}\n`)
    await readPipe(pipe, queue, first, () => leaving)
  }

  process.off("SIGINT", onSignal)
  await queue.close()
  screen?.close()
  write(style.dim(`\nResume this session with: keel --resume ${await runtime.runPromise(current.session.sessionId)}\n`))
  await runtime.runPromise(Scope.close(turnsScope, Exit.void))
  await runtime.runPromise(Scope.close(current.scope, Exit.void))
  await runtime.runPromise(Fiber.interrupt(answering))
  await runtime.dispose()
  terminate.dispose()
  return terminate.code() ?? 0
}
