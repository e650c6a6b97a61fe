/**
 * Generated conversations for property tests: turns of a prompt, tool rounds (a `Read` call, some
 * with a signed thinking block, and its result) and a final answer, ending with a new prompt. No
 * usage, so every estimate is by size.
 */
import { Message, TestModel } from "@keel/core"
import { FastCheck } from "effect"

/** One turn's shape. */
export interface TurnShape {
  readonly rounds: number
  readonly thinking: boolean
  /** Characters in the prompt. */
  readonly size: number
  /** Which of a few files the turn's reads name. */
  readonly file: number
}

/** Conversations of 1–8 turns. */
export const shapes: FastCheck.Arbitrary<ReadonlyArray<TurnShape>> = FastCheck.array(
  FastCheck.record({
    rounds: FastCheck.integer({ min: 0, max: 3 }),
    thinking: FastCheck.boolean(),
    size: FastCheck.integer({ min: 0, max: 3_000 }),
    file: FastCheck.integer({ min: 0, max: 2 })
  }),
  { minLength: 1, maxLength: 8 }
)

const signature = "sig-" + "s".repeat(20)

/** What a read of file n returns: always the same. */
export const fileText = (n: number): string => `contents of /f${n}\n` + "r".repeat(800 * (n + 1))

/** The conversation of this shape. Reads of the same file return the same text. */
export const build = (shape: ReadonlyArray<TurnShape>): Array<Message.Message> => {
  const out: Array<Message.Message> = []
  let id = 0
  shape.forEach((turn, t) => {
    out.push(Message.user(`prompt ${t} ` + "p".repeat(turn.size)))
    for (let r = 0; r < turn.rounds; r++) {
      const uses = [TestModel.toolUse("Read", { file_path: `/f${turn.file}` }, `toolu_${++id}`)]
      const content: Array<Message.ContentBlock> = turn.thinking
        ? [new Message.ThinkingBlock({ thinking: `thinking ${t}.${r}`, signature }), ...uses]
        : uses
      out.push(new Message.AssistantMessage({ content, id: `msg_${t}_${r}` }))
      out.push(Message.user(uses.map((u) =>
        new Message.ToolResultBlock({ tool_use_id: u.id, content: fileText(turn.file) })
      )))
    }
    out.push(new Message.AssistantMessage({ content: [new Message.TextBlock({ text: `answer ${t}` })], id: `msg_${t}` }))
  })
  out.push(Message.user("the next prompt"))
  return out
}
