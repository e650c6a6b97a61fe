/**
 * The REPL's `/resume`: without an argument, the other saved sessions of this folder (newest first,
 * with their age and first prompt); with a number from that list or a session id, a switch to it.
 * The session switched to is opened in a scope of its own while the current one stays open, so a
 * session that cannot be opened leaves the current one as it was; the caller moves its turns to the
 * new session and closes the old one's scope once its turns are over.
 *
 * @since 0.1.0
 */
import { type Session, SessionStore } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Runtime from "../Runtime.js"
import type * as Style from "./Style.js"

/** A session with the scope it lives in. @category Models */
export interface Current {
  readonly scope: Scope.CloseableScope
  readonly session: Session.Service
}

/** What `/resume` did: what to show, and the session it opened (to switch to), if it did. @category Models */
export interface Outcome {
  readonly text: string
  readonly opened?: Current | undefined
}

/** What `/resume` works with. @category Models */
export interface Context {
  readonly runtime: ManagedRuntime.ManagedRuntime<Runtime.Services, Runtime.LayerError>
  readonly options: Runtime.Options
  readonly debug: boolean
  readonly cwd: string
  readonly style: Style.Style
  readonly current: Current
}

/** How long ago, in the largest unit that fits. */
const ago = (ms: number): string => {
  const minutes = Math.round(ms / 60_000)
  return minutes < 1 ? "just now" : minutes < 60 ? `${minutes} min ago` : minutes < 48 * 60
    ? `${Math.round(minutes / 60)} h ago`
    : `${Math.round(minutes / 1440)} days ago`
}

/** Runs `/resume arg`: lists the sessions, or opens the one it names. @category Running */
export const run = async (arg: string, context: Context): Promise<Outcome> => {
  const { current, runtime, style } = context
  const store = await runtime.runPromise(SessionStore.SessionStore)
  const listed = await runtime.runPromiseExit(store.list(context.cwd))
  if (Exit.isFailure(listed)) return { text: style.red("Could not list the saved sessions of this folder.") }
  const currentId = await runtime.runPromise(current.session.sessionId)
  const sessions = listed.value.filter((s) => s.sessionId !== currentId)
  if (arg === "") {
    if (sessions.length === 0) return { text: style.dim("No other saved sessions in this folder.") }
    const now = Date.now()
    const text = sessions.slice(0, 20).map((s, i) =>
      `${style.bold(String(i + 1).padStart(2))}. ${s.sessionId} ${style.dim(ago(now - s.modifiedAt))} ${s.firstPrompt?.replace(/\s+/g, " ").slice(0, 60) ?? ""}`
    ).join("\n") + style.dim("\n/resume <number or id> switches to one.")
    return { text }
  }
  const n = Number(arg)
  const id = Number.isInteger(n) && n >= 1 && n <= sessions.length ? sessions[n - 1]!.sessionId : arg
  const nextScope = await runtime.runPromise(Scope.make())
  const next = await runtime.runPromiseExit(
    Runtime.openSession({
      ...context.options,
      resume: id,
      continue: false,
      forkSession: false,
      resumeSessionAt: undefined,
      sessionId: undefined
    }).pipe(
      Scope.extend(nextScope)
    )
  )
  if (Exit.isFailure(next)) {
    await runtime.runPromise(Scope.close(nextScope, Exit.void))
    const failure = Runtime.describeFailure(next.cause, context.debug)
    return { text: style.red(failure.lines.join("\n")) }
  }
  const { session } = next.value
  const messages = (await runtime.runPromise(Effect.flatMap(session.state, (state) => Ref.get(state.messages)))).length
  return {
    text: style.dim(`Resumed session ${await runtime.runPromise(session.sessionId)} (${messages} messages).`),
    opened: { session, scope: nextScope }
  }
}
