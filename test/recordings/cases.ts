/**
 * The regression corpus's cases: each a `keel -p` run against the loopback fake of the Messages
 * API, played from a script. `record.ts` records them (`--record`) into this folder, one
 * `<name>.journal` and `<name>.jsonl` each; `test/recordings.e2e.test.ts` replays every journal
 * here with `keel replay`, so a change to what the kernel sends fails with the call, the field and
 * a diff.
 */
import * as FakeAnthropic from "../support/FakeAnthropic.js"

/** One case: its files in the folder it runs in, its command line and the fake's script. @category Models */
export interface Case {
  readonly name: string
  readonly files: Readonly<Record<string, string>>
  readonly args: ReadonlyArray<string>
  readonly script: ReadonlyArray<FakeAnthropic.ScriptItem>
}

/** Every case of the corpus. @category Constants */
export const cases: ReadonlyArray<Case> = [
  {
    name: "read-and-answer",
    files: { "notes.md": "# Notes\nThe answer is 42.\n" },
    args: ["-p", "what does notes.md say?", "--allowedTools", "Read"],
    script: [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "notes.md" }, id: "toolu_read" }]),
      FakeAnthropic.textReply("It says the answer is 42.")
    ]
  },
  {
    name: "retry-after-429",
    files: {},
    args: ["-p", "hello"],
    script: [
      FakeAnthropic.errorReply(429, "rate_limit_error", "Number of requests has exceeded your rate limit", { "retry-after": "1" }),
      FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
      FakeAnthropic.textReply("Hello! How can I help?")
    ]
  },
  {
    name: "overload-fallback",
    files: {},
    args: ["-p", "summarise the project", "--fallback-model", "claude-haiku-4-5"],
    script: [
      FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
      FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
      FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
      FakeAnthropic.textReply("There is nothing here yet.", { model: "claude-haiku-4-5" })
    ]
  },
  {
    name: "parallel-reads",
    files: { "a.txt": "alpha\n", "b.txt": "beta\n" },
    args: ["-p", "read a.txt and b.txt", "--allowedTools", "Read"],
    script: [
      FakeAnthropic.toolUseReply([
        { name: "Read", input: { file_path: "a.txt" }, id: "toolu_a" },
        { name: "Read", input: { file_path: "b.txt" }, id: "toolu_b" }
      ]),
      FakeAnthropic.textReply("a.txt says alpha, b.txt says beta.")
    ]
  }
]
