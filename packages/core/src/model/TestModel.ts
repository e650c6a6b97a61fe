/**
 * A scripted, in-memory `ModelClient` for tests (ours and embedders'): each request takes the next
 * reply of the script, and every request is recorded. Delays go through `Clock`, so `TestClock`
 * drives them.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import {
  AssistantMessage,
  type ContentBlock,
  type StopReason,
  TextBlock,
  ToolUseBlock,
  Usage
} from "../message/Message.js"
import * as Credentials from "./Credentials.js"
import { ModelClient } from "./ModelClient.js"
import type { ModelError } from "./ModelError.js"
import type { ModelRequest } from "./ModelRequest.js"
import { fromMessage, type StreamEvent } from "./StreamEvent.js"

/** One scripted reply. @category Models */
export interface Reply {
  /** The events to stream. */
  readonly events: ReadonlyArray<StreamEvent>
  /** Wait this long before the first event. */
  readonly delay?: Duration.DurationInput
  /** Fail with this error after the events. */
  readonly failWith?: ModelError
  /** Emit the events, then stall forever (for idle-watchdog tests). */
  readonly stall?: boolean
  /** Pause this long after the event at index `after` (to see what happens while an answer still streams). */
  readonly pauses?: ReadonlyArray<{ readonly after: number; readonly delay: Duration.DurationInput }>
}

/** A reply, or a function of the request that picks one. @category Models */
export type ScriptItem = Reply | ((request: ModelRequest) => Reply)

/** Options for {@link reply}. @category Models */
export interface ReplyOptions {
  readonly stopReason?: StopReason
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number }
  readonly model?: string
  readonly id?: string
  readonly chunkSize?: number
}

/**
 * The id of a message whose test did not name one. The layer gives each such message the id
 * `msg_test_<n>`, n the number of the request it answers (from 1), so ids depend only on the script:
 * two runs of one script stream the same ids.
 *
 * @category Constants
 */
export const AUTO_MESSAGE_ID = "msg_test"

/**
 * The id of a tool call whose test did not name one. The layer gives each such call the id
 * `toolu_test_<n>_<index>`: the request it answers (from 1) and its block's index.
 *
 * @category Constants
 */
export const AUTO_TOOL_USE_ID = "toolu_test"

/**
 * A finished assistant message with test defaults: the id {@link AUTO_MESSAGE_ID}, model
 * `claude-test`, stop reason `tool_use` when it calls a tool and `end_turn` otherwise, 10 input and 5
 * output tokens.
 *
 * @category Constructors
 */
export const message = (
  content: ReadonlyArray<ContentBlock>,
  options: Omit<ReplyOptions, "chunkSize"> = {}
): AssistantMessage =>
  new AssistantMessage({
    content,
    id: options.id ?? AUTO_MESSAGE_ID,
    model: options.model ?? "claude-test",
    stop_reason: options.stopReason ?? (content.some((b) => b instanceof ToolUseBlock) ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: new Usage(options.usage ?? { input_tokens: 10, output_tokens: 5 })
  })

/** A reply streaming a message with these content blocks. @category Constructors */
export const reply = (content: ReadonlyArray<ContentBlock>, options: ReplyOptions = {}): Reply => ({
  events: fromMessage(message(content, options), options.chunkSize !== undefined ? { chunkSize: options.chunkSize } : {})
})

/** A reply with one text block. @category Constructors */
export const text = (value: string, options?: ReplyOptions): Reply => reply([new TextBlock({ text: value })], options)

/** A tool call block, for {@link reply} (id: {@link AUTO_TOOL_USE_ID} unless given). @category Constructors */
export const toolUse = (name: string, input: unknown, id = AUTO_TOOL_USE_ID): ToolUseBlock =>
  new ToolUseBlock({ id, name, input })

/** A reply that fails with `error` (after `events`, if any). @category Constructors */
export const fail = (error: ModelError, events: ReadonlyArray<StreamEvent> = []): Reply => ({ events, failWith: error })

/** @category Models */
export interface Service {
  /** Every request received so far, in order (without the tracing span a request carries). */
  readonly requests: Effect.Effect<ReadonlyArray<ModelRequest>>
  /** When each request arrived (`Clock` milliseconds, so `TestClock` time in tests), in order. */
  readonly requestTimes: Effect.Effect<ReadonlyArray<number>>
}

/** Access to what the scripted model received. @category Context */
export class TestModel extends Context.Tag("@keel/core/TestModel")<TestModel, Service>() {}

/** The reply's events with the ids its test left unset assigned for request `n` (from 1). */
const withIds = (events: ReadonlyArray<StreamEvent>, n: number): ReadonlyArray<StreamEvent> =>
  events.map((event) => {
    if (event.type === "message_start" && event.message.id === AUTO_MESSAGE_ID) {
      return { ...event, message: { ...event.message, id: `msg_test_${n}` } }
    }
    if (
      event.type === "content_block_start" && event.content_block.type === "tool_use" &&
      event.content_block.id === AUTO_TOOL_USE_ID
    ) {
      return { ...event, content_block: { ...event.content_block, id: `toolu_test_${n}_${event.index}` } }
    }
    return event
  })

const play = (reply: Reply, n: number): Stream.Stream<StreamEvent, ModelError> => {
  const r = { ...reply, events: withIds(reply.events, n) }
  let out: Stream.Stream<StreamEvent, ModelError> = Stream.fromIterable(r.events)
  if (r.pauses !== undefined && r.pauses.length > 0) {
    const pauses = r.pauses
    out = Stream.fromIterable(r.events.map((event, i) => [event, i] as const)).pipe(
      Stream.mapEffect(([event, i]) => {
        const pause = pauses.find((p) => p.after === i - 1)
        return pause === undefined ? Effect.succeed(event) : Effect.as(Effect.sleep(pause.delay), event)
      })
    )
  }
  if (r.failWith !== undefined) out = Stream.concat(out, Stream.fail(r.failWith))
  else if (r.stall === true) out = Stream.concat(out, Stream.never)
  if (r.delay !== undefined) out = Stream.concat(Stream.fromEffect(Effect.sleep(r.delay)).pipe(Stream.drain), out)
  return out
}

/** A request as a test reads it: what would be sent, without its tracing span. */
const withoutSpan = (request: ModelRequest): ModelRequest => {
  if (request.span === undefined) return request
  const { span: _, ...sent } = request
  return sent
}

/**
 * A `ModelClient` that answers request n with script item n, a `TestModel` to read the recorded
 * requests, and `Credentials.none` (a scripted model has no key to refresh). A request past the end
 * of the script is a defect naming the request number.
 *
 * @category Layers
 */
export const layer = (
  script: ReadonlyArray<ScriptItem>
): Layer.Layer<ModelClient | TestModel | Credentials.Credentials> =>
  Layer.effectContext(Effect.gen(function*() {
    const requests = yield* Ref.make(Chunk.empty<ModelRequest>())
    const times = yield* Ref.make(Chunk.empty<number>())
    const client = ModelClient.of({
      stream: (request) =>
        Stream.unwrap(Ref.modify(requests, (rs) => [rs.length, Chunk.append(rs, withoutSpan(request))]).pipe(
          Effect.tap(() => Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(times, Chunk.append(now)))),
          Effect.map((n) => {
          const item = script[n]
          if (item === undefined) {
            return Stream.dieMessage(`TestModel: no scripted reply for request ${n + 1} (script has ${script.length})`)
          }
          return play(typeof item === "function" ? item(request) : item, n + 1)
        })))
    })
    return Context.make(ModelClient, client).pipe(
      Context.add(TestModel, {
        requests: Effect.map(Ref.get(requests), Chunk.toReadonlyArray),
        requestTimes: Effect.map(Ref.get(times), Chunk.toReadonlyArray)
      }),
      Context.add(Credentials.Credentials, Credentials.none)
    )
  }))
