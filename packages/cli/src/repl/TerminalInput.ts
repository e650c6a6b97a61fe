/**
 * The REPL's keyboard in a terminal: one input line, open for the whole session under the output
 * (`Screen`), the terminal in raw mode. Each key does what `InputKeys` decides for it: Enter hands
 * the text to `submit` whether a turn runs or not (the session's runtime runs it or queues it), ↑
 * pulls the last queued prompt back, Esc drops it or interrupts, and so on; a permission question
 * takes the next answer key instead, and the reason after a `n` is read in the input line's place.
 * Lines that arrive in one go (a paste) are one prompt. Typing `/` opens the command menu under the
 * line (`SlashMenu`); the row under it shows the permission mode (Shift+Tab cycles it) or, while the
 * line starts with `!`, that it runs as a shell command.
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"
import * as Completion from "./Completion.js"
import * as InputKeys from "./InputKeys.js"
import * as InputLine from "./InputLine.js"
import * as PermissionPrompt from "./PermissionPrompt.js"
import type { Screen } from "./Screen.js"
import * as SlashMenu from "./SlashMenu.js"
import type * as Style from "./Style.js"

/** What the keys act on. @category Models */
export interface Handlers {
  /** A prompt (or command) entered. */
  readonly submit: (text: string) => void
  /** Stops the running turn. */
  readonly interrupt: () => void
  /** Takes the last queued prompt out of the queue: its text, or `undefined` if it is not queued any more. */
  readonly pullBack: () => Promise<string | undefined>
  readonly exit: () => void
  /** Whether a turn runs, and how many prompts wait. */
  readonly situation: () => { readonly running: boolean; readonly queued: number }
  /** Switches to the next permission mode (Shift+Tab); the mode row is drawn again once it resolves. */
  readonly cycleMode: () => Promise<void>
  /** Shows the last tool call's whole output (Ctrl+O). */
  readonly expand: () => void
}

/** Options of the input. @category Models */
export interface Options {
  readonly input: NodeJS.ReadStream
  readonly screen: Screen
  readonly prompt: string
  readonly continuation: string
  readonly completer: Completion.Completer
  /** Earlier entries, oldest first. */
  readonly history: ReadonlyArray<string>
  /** Called with each new entry, to save it. */
  readonly onEntry: (entry: string) => void
  /** Shown under the line after a first Ctrl+C on an empty line. */
  readonly exitHint: string
  /** Shown under the line when a pulled-back prompt is dropped. */
  readonly droppedNote: string
  /** Shows a list of completions above the line. */
  readonly list: (candidates: ReadonlyArray<string>) => void
  /** The commands the `/` menu offers. */
  readonly menu: ReadonlyArray<SlashMenu.Item>
  /** The row under the line for the permission mode now (`undefined`: none). */
  readonly modeRow: () => string | undefined
  /** The row under the line while it starts with `!`. */
  readonly shellHint: string
  readonly style: Style.Style
  readonly columns: () => number
  readonly handlers: Handlers
}

/** The terminal's keyboard. @category Models */
export interface TerminalInput extends PermissionPrompt.Keys {
  /** Opens the line and starts reading keys. */
  readonly start: () => void
  /** Stops reading keys and takes the line off the screen (the terminal leaves raw mode). */
  readonly close: () => void
}

/** The input line of a terminal. @category Constructors */
export const make = (options: Options): TerminalInput => {
  const { handlers, input, screen } = options
  let line = InputLine.make(options.history)
  let exitArmed = false
  let lastKey = ""
  let previousKey = ""
  // Enter was pressed on this text: it is submitted unless more keys come in the same go (a paste).
  let entered = false
  let pulling = false
  let question: ((answer: PermissionPrompt.Answer) => void) | undefined
  // A line read for a permission question (the reason after `n`), in place of the input line.
  let reading: { line: InputLine.InputLine; readonly prompt: string; readonly done: (text: string) => void } | undefined
  let listening = false
  // The menu's chosen row, for the text it was chosen at; the text Esc closed the menu at.
  let menuSelected = 0
  let menuText = ""
  let menuClosedAt: string | undefined

  // Not over a history entry being browsed: ↑/↓ go on through history.
  const menuItems = (): ReadonlyArray<SlashMenu.Item> =>
    menuClosedAt === line.text || line.browsing !== -1 ? [] : SlashMenu.matching(options.menu, line.text)

  const show = (note?: string) => {
    if (line.text !== menuText) {
      menuText = line.text
      menuSelected = 0
      if (menuClosedAt !== line.text) menuClosedAt = undefined
    }
    const shown = menuItems()
    screen.set({
      input: reading !== undefined
        ? { prompt: reading.prompt, continuation: options.continuation, text: reading.line.text, cursor: reading.line.cursor }
        : { prompt: options.prompt, continuation: options.continuation, text: line.text, cursor: line.cursor },
      menu: reading !== undefined ? [] : SlashMenu.rows(shown, menuSelected, options.columns(), options.style),
      mode: reading !== undefined ? undefined : line.text.startsWith("!") ? options.shellHint : options.modeRow(),
      note
    })
  }

  /** A key while a reason is read: Enter ends the line, Esc and Ctrl+C give none, other keys edit. */
  const onReasonKey = (text: string | undefined, key: InputKeys.Key | undefined) => {
    const r = reading!
    const name = key?.name ?? ""
    const stop = name === "escape" || (key?.ctrl === true && name === "c")
    if (stop || name === "return" || name === "enter") return r.done(stop ? "" : r.line.text)
    const command = InputKeys.decide(r.line, text, key, { running: false, queued: 0, exitArmed: false })
    if (command._tag === "Edit") {
      r.line = command.line
      show()
    }
  }

  const submitEntered = () => {
    if (!entered) return
    entered = false
    const text = line.text
    line = InputLine.submitted(line, text)
    options.onEntry(text)
    show()
    handlers.submit(text)
  }

  const pullBack = () => {
    if (pulling) return
    pulling = true
    void handlers.pullBack().then((text) => {
      pulling = false
      if (text === undefined) return
      // Typed into meanwhile: the prompt goes back to the queue rather than be lost.
      if (line.text !== "") return handlers.submit(text)
      line = InputLine.set(line, text, true)
      show()
    })
  }

  const run = (command: InputKeys.Command) => {
    switch (command._tag) {
      case "Edit":
        line = command.line
        return show()
      case "Drop":
        line = command.line
        return show(options.droppedNote)
      case "Submit":
        entered = true
        setImmediate(submitEntered)
        return
      case "PullBack":
        return pullBack()
      case "Interrupt":
        handlers.interrupt()
        return show()
      case "Complete": {
        const completed = Completion.tab(line, options.completer, previousKey === "tab")
        line = completed.line
        if (completed.listed !== undefined) options.list(completed.listed)
        return show()
      }
      case "ArmExit":
        exitArmed = true
        return show(options.exitHint)
      case "Exit":
        return handlers.exit()
      case "Redraw":
        return screen.redraw()
      case "CycleMode":
        return void handlers.cycleMode().then(() => show())
      case "Expand":
        return handlers.expand()
      case "MenuMove": {
        const count = menuItems().length
        menuSelected = (menuSelected + command.by + count) % Math.max(1, count)
        return show()
      }
      case "MenuAccept": {
        const chosen = menuItems()[menuSelected]
        if (chosen === undefined) return show()
        if (command.enter && line.text === chosen.name) return run({ _tag: "Submit", text: line.text })
        line = InputLine.set(line, `${chosen.name} `)
        return show()
      }
      case "MenuClose":
        menuClosedAt = line.text
        return show()
      case "Ignore":
        return
    }
  }

  const onKey = (text: string | undefined, key: InputKeys.Key | undefined) => {
    if (reading !== undefined) return onReasonKey(text, key)
    if (question !== undefined) {
      const answer = PermissionPrompt.answerOf(text, key)
      if (answer === undefined) return
      const resolve = question
      question = undefined
      resolve(answer)
      if (answer === "deny" && key?.ctrl === true) handlers.interrupt()
      return
    }
    const name = key?.name ?? ""
    // "\r\n" is one Enter.
    const crlf = name === "enter" && lastKey === "return"
    previousKey = lastKey
    lastKey = name
    if (crlf) return
    // A key in the same go as Enter: a paste, whose line breaks stay in the prompt.
    if (entered) {
      entered = false
      line = InputLine.insert(line, "\n")
    }
    const armed = exitArmed
    exitArmed = false
    run(InputKeys.decide(line, text, key, { ...handlers.situation(), exitArmed: armed, menu: menuItems().length > 0 }))
  }

  return {
    start: () => {
      if (listening) return
      listening = true
      readline.emitKeypressEvents(input)
      input.setRawMode?.(true)
      input.on("keypress", onKey)
      input.resume()
      show()
    },
    close: () => {
      if (!listening) return
      listening = false
      input.off("keypress", onKey)
      input.setRawMode?.(false)
      input.pause()
      screen.set({ input: undefined, note: undefined })
    },
    ask: (signal) =>
      new Promise<PermissionPrompt.Answer>((resolve) => {
        if (signal.aborted) return resolve("deny")
        const onAbort = () => {
          question = undefined
          resolve("deny")
        }
        signal.addEventListener("abort", onAbort, { once: true })
        question = (answer) => {
          signal.removeEventListener("abort", onAbort)
          resolve(answer)
        }
      }),
    reason: (prompt, signal) =>
      new Promise<string>((resolve) => {
        if (signal.aborted) return resolve("")
        const done = (text: string) => {
          signal.removeEventListener("abort", onAbort)
          reading = undefined
          show()
          resolve(text)
        }
        const onAbort = () => done("")
        signal.addEventListener("abort", onAbort, { once: true })
        reading = { line: InputLine.make([]), prompt, done }
        show()
      })
  }
}
