// One query() run, as an embedding program does it: import `@keel/cli` (whatever its package
// exports resolve to: the bundle), run one prompt, print the result's text. test/cli.test.ts and
// bench/startup.ts run it with plain node (tsx would resolve `@keel/cli` to its TypeScript
// sources), against a fake API.
import { query } from "@keel/cli"

for await (const message of query({ prompt: process.argv[2] ?? "hi" })) {
  if (message.type === "result") process.stdout.write(`${message.subtype === "success" ? message.result : message.subtype}\n`)
}
