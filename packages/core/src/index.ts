/**
 * Keel's kernel.
 *
 * @since 0.1.0
 */

/** Accumulator: stream events → the final assistant message, in linear time. */
export * as Accumulator from "./model/Accumulator.js"
/** The base `ModelClient` over `@anthropic-ai/sdk`. */
export * as AnthropicModel from "./model/AnthropicModel.js"
/** A keep-alive `fetch` over `node:http` for the SDK, with a body readable without web streams. */
export * as HttpTransport from "./model/HttpTransport.js"
/** Autocompact: the summarising compaction stage, its reactive twin, and their circuit breaker. */
export * as Autocompact from "./context/Autocompact.js"
/** The turn loop's decisions, a pure function of its state and what happened. */
export * as Decide from "./turn/Decide.js"
/** Where every id comes from (sessions, messages, transcript entries). */
export * as Ids from "./ids/Ids.js"
/** The turn loop's control state. */
export * as LoopState from "./turn/LoopState.js"
/** The SDK projection: turn events and totals as SDK messages. */
export * as SdkProjection from "./session/SdkProjection.js"
export * as SdkResult from "./session/SdkResult.js"
/** An answer as Claude Code prints it in `stream-json`: one `assistant` message per content block. */
export * as SdkBlocks from "./session/SdkBlocks.js"
/** A session's system prompt, resolved once. */
export * as SessionPrompt from "./prompt/SessionPrompt.js"
/** Token counts, one shape everywhere. */
export * as TokenUsage from "./session/TokenUsage.js"
/** What a running tool reports besides its result (a subagent's events). */
export * as ToolEvent from "./tool/ToolEvent.js"
/** Every tool call bounded in time, per tool and configurable. */
export * as ToolTimeout from "./tool/ToolTimeout.js"
/** Where tools spill output too large to return whole (Read may read it back). */
export * as ToolOutputDir from "./tool/ToolOutputDir.js"
/** The turn loop's policies: continuation, prompt-too-long recovery, call budget. */
export * as TurnPolicy from "./turn/TurnPolicy.js"
/** The turn loop's handle on reactive compaction. */
export * as Compactor from "./context/Compactor.js"
/** One compaction: the summary, the files re-read, the recent turns verbatim; smaller or failed. */
export * as Compaction from "./context/Compaction.js"
/** The compaction circuit breaker, one per session: repeated failures or rapid refills end the turn. */
export * as CompactionBreaker from "./context/CompactionBreaker.js"
/** The context management pipeline: budget → snip → microcompact → collapse → autocompact. */
export * as ContextManagement from "./context/ContextManagement.js"
/** What the context window holds, by category (`/context`). */
export * as ContextUsage from "./context/ContextUsage.js"
/** The context collapse stage. */
export * as ContextCollapse from "./context/ContextCollapse.js"
/** Context assembly: the default system prompt (base instructions, project instructions, git, environment). */
export * as ContextAssembly from "./prompt/ContextAssembly.js"
/** The base instructions of the default system prompt (from `prompt/text/*.md`). */
export * as BaseInstructions from "./prompt/BaseInstructions.js"
/** The environment section of the system prompt: working directory, platform, shell, date, model. */
export * as Environment from "./prompt/Environment.js"
/** Model names and knowledge cutoffs the environment section states. */
export * as ModelFacts from "./prompt/ModelFacts.js"
/** Where the model layer gets its API key or token. */
export * as Credentials from "./model/Credentials.js"
/** Model fallback after repeated overloads. */
export * as Fallback from "./resilience/Fallback.js"
/** The stream idle watchdog. */
export * as IdleWatchdog from "./resilience/IdleWatchdog.js"
/** The git facts of a session: branch, default branch, status, recent commits, user. */
export * as GitContext from "./prompt/GitContext.js"
/** Keel's own git commands, run so that a repository's configuration cannot make them execute a program. */
export * as SafeGit from "./git/SafeGit.js"
/** Conversation invariants checked after every stage. */
export * as Invariants from "./turn/Invariants.js"
/** The message model. */
export * as Message from "./message/Message.js"
/** Bash commands as permission rules see them. */
export * as BashCommand from "./permission/BashCommand.js"
/** The bash grammar Bash rules are judged with (loaded on first use). */
export * as BashGrammar from "./permission/BashGrammar.js"
/** The microcompact stage. */
export * as Microcompact from "./context/Microcompact.js"
/** The model port. */
export * as ModelClient from "./model/ModelClient.js"
/** Typed model failures. */
export * as ModelError from "./model/ModelError.js"
/** The classifier of model failures: whatever the SDK or the transport threw, as one typed `ModelError`. */
export * as ModelErrorClassifier from "./model/ModelErrorClassifier.js"
/** Whether the API's base URL can be fetched at all. */
export * as BaseUrl from "./model/BaseUrl.js"
/** A 200 answer that is not an event stream: a JSON `Message`, or a malformed response. */
export * as JsonAnswer from "./model/JsonAnswer.js"
/** What to show of an error page that is not the API's JSON. */
export * as ErrorPage from "./model/ErrorPage.js"
/** Notices from the resilience layers. */
export * as ModelNotice from "./model/ModelNotice.js"
/** A model request. */
export * as ModelRequest from "./model/ModelRequest.js"
/** What each model can do, in one table: context window, output limits, thinking, betas; extensible. */
export * as ModelCapabilities from "./model/ModelCapabilities.js"
/** Thinking and effort: the session's setting, each model's capability, the request parameters. */
export * as Thinking from "./model/Thinking.js"
/** Permission rules in Claude Code's syntax. */
export * as PermissionRule from "./permission/PermissionRule.js"
/** Policy changes that come with a permission answer (the Agent SDK's `updatedPermissions`). */
export * as PermissionUpdate from "./permission/PermissionUpdate.js"
/** Paths as permission checks see them: real paths, and the workspace's boundary. */
export * as PathBoundary from "./permission/PathBoundary.js"
/** What Grep and Glob may show: not what Read deny rules cover, nothing outside the workspace. */
export * as ReadRules from "./permission/ReadRules.js"
/** The permission check before every tool call. */
export * as Permissions from "./permission/Permissions.js"
/** Paths whose writes always ask: settings folders, `.git/`, shell start-up files. */
export * as ProtectedPaths from "./permission/ProtectedPaths.js"
/** The decorator that records every denial in the session's permission denials. */
export * as DenialRecording from "./permission/DenialRecording.js"
/** The preprocessing pipeline. */
export * as Pipeline from "./turn/Pipeline.js"
/** The instruction files a session follows: KEEL.md, AGENTS.md, CLAUDE.md, $KEEL_HOME/KEEL.md. */
export * as ProjectInstructions from "./prompt/ProjectInstructions.js"
/** Memory files: one instruction file or import, and how a set of them is gathered (each once, imports bounded). */
export * as MemoryFile from "./memory/MemoryFile.js"
/** `@path` imports in memory files (not in code), as Claude Code reads them. */
export * as MemoryImports from "./memory/MemoryImports.js"
/** The memory a session starts with: the user's, then each folder from the repository root down to the working directory. */
export * as MemoryLoader from "./memory/MemoryLoader.js"
/** Nested memory: the instruction files of folders below the working directory, sent once a tool first touches them. */
export * as NestedMemory from "./memory/NestedMemory.js"
/** Prompt caching: `cache_control` breakpoints on tools, the stable system prompt and the conversation tail. */
export * as PromptCaching from "./model/PromptCaching.js"
/** Model prices: the table, its overrides (`KEEL_PRICING_FILE`), the cost of tokens. */
export * as Pricing from "./session/Pricing.js"
/** The session's cost: `modelUsage`, `total_cost_usd`, unpriced models, `/cost`. */
export * as Cost from "./session/Cost.js"
/** Slash commands: which prompts are commands, the built-in ones, `/help`. */
export * as SlashCommand from "./input/SlashCommand.js"
/** The built-in slash commands (the default `Commands` layer): `/compact`, `/clear`, `/context`, `/cost`, `/model`, `/help`. */
export * as BuiltinCommands from "./input/BuiltinCommands.js"
/** A custom command's prompt: its body with the arguments substituted, after the tag block. */
export * as CommandArguments from "./input/CommandArguments.js"
/** A custom command's file: frontmatter and body. */
export * as CommandFile from "./input/CommandFile.js"
/** Custom slash commands from Markdown files (`.keel/commands/`, `$KEEL_HOME/commands/`). */
export * as MarkdownCommands from "./input/MarkdownCommands.js"
/** The slash commands a session answers: the service, its layers, how an embedder adds commands. */
export * as Commands from "./input/Commands.js"
/** `@path` mentions: files attached to a prompt. */
export * as Mentions from "./input/Mentions.js"
/** The whole resilience stack: watchdog, retry, fallback. */
export * as Resilience from "./resilience/Resilience.js"
/** Retrying failed model calls. */
export * as Retry from "./resilience/Retry.js"
/** When and after how long a failed model call is retried. */
export * as RetryPolicy from "./resilience/RetryPolicy.js"
/** SDK-shaped output messages. */
export * as SdkMessage from "./session/SdkMessage.js"
/** The per-conversation engine. */
export * as Session from "./session/Session.js"
/** Turn admission as data: the queue's order rules (priorities, promotion, removal). */
export * as Admission from "./admission/Admission.js"
/** The single owner of a session's turn admission: submit, the queue and its operations. */
export * as SessionRuntime from "./runtime/SessionRuntime.js"
/** The runtime protocol: the runtime's operations as one `@effect/rpc` group, transport-free. */
export * as RuntimeProtocol from "./protocol/RuntimeProtocol.js"
/** A pending action: what a turn waits for an answer to (a permission ask, an MCP elicitation). */
export * as Action from "./action/Action.js"
/** Ask → respond: pending actions, answered through one `respond`. */
export * as Actions from "./action/Actions.js"
/** A persistent goal: continuation turns while it is active, and when they must not start. */
export * as Goal from "./goal/Goal.js"
/** A turn cut by a restart while it waited for an answer, and how it runs on. */
export * as PendingTools from "./runtime/PendingTools.js"
/** The per-conversation state. */
export * as SessionState from "./session/SessionState.js"
/** Where session transcripts live: append, sync, load, list. */
export * as SessionStore from "./session/SessionStore.js"
/** One writer per session: the lock file next to a transcript (`<id>.lock`), stale locks, release. */
export * as SessionLock from "./session/SessionLock.js"
/** Resuming a saved session: which transcript, loaded under its lock, and the state it restores. */
export * as Resume from "./session/Resume.js"
/** Session transcripts, pure: diffing the conversation, replaying a file, repairing a cut one. */
export * as Transcript from "./session/Transcript.js"
/** A transcript cut at one of its messages (`resumeSessionAt`): what the session was then, for a fork. */
export * as TranscriptCut from "./session/TranscriptCut.js"
/** The uuid of each message of a session: its SDK message's and its transcript entry's. */
export * as MessageIds from "./session/MessageIds.js"
/** The entries of a session transcript (one JSON object a line). */
export * as TranscriptEntry from "./session/TranscriptEntry.js"
/** What can go wrong with a transcript: corrupt, foreign, not found. */
export * as TranscriptError from "./session/TranscriptError.js"
/** Appends to transcript files, each held open between flushes and written without the thread pool. */
export * as TranscriptAppender from "./session/TranscriptAppender.js"
/** The writer of one session's transcript. */
export * as TranscriptRecorder from "./session/TranscriptRecorder.js"
/** The turn input envelope: what each model turn was built from, recorded once per turn. */
export * as TurnEnvelope from "./session/TurnEnvelope.js"
/** The read model of a session: a versioned projection of its transcript (turns, items, usage, what is open). */
export * as ReadModel from "./read/ReadModel.js"
/** A session's exports (handoff, replay case, review), projected from its transcript. */
export * as Export from "./read/Export.js"
/** The handoff bundle: goal, summary, open items, files touched. */
export * as Handoff from "./read/Handoff.js"
/** The replay case: envelopes, system prompts, and per turn the requests as recorded and the answers. */
export * as ReplayCase from "./read/ReplayCase.js"
/** The review bundle: every tool call with its permission decision, and the diffs of edited files. */
export * as Review from "./read/Review.js"
/** The permission decision of a recorded tool call, from the recorded facts. */
export * as PermissionDecision from "./read/PermissionDecision.js"
/** The diffs of a session's file tool calls, from their recorded inputs. */
export * as FileEdits from "./read/FileEdits.js"
/** A preprocessing stage. */
export * as Stage from "./turn/Stage.js"
/** A session's memory for the stages of its pipeline, dropped with the session. */
export * as StageMemory from "./turn/StageMemory.js"
/** The system prompt in two parts: stable, then the session's own. */
export * as SystemPrompt from "./prompt/SystemPrompt.js"
/** The facts a system prompt was built from: instruction files, environment, git. */
export * as ContextSnapshot from "./prompt/ContextSnapshot.js"
/** The snip stage. */
export * as Snip from "./context/Snip.js"
/** Raw stream events. */
export * as StreamEvent from "./model/StreamEvent.js"
/** The files re-read after a compaction: the most recently read, within budgets. */
export * as FileRestore from "./context/FileRestore.js"
/** What the file tools know of the session's files (read, and their mtime then). */
export * as FileState from "./tool/FileState.js"
/** The summary request of a compaction, its oldest turns dropped while it is too long. */
export * as Summary from "./context/Summary.js"
/** The instructions of a compaction summary. */
export * as SummaryPrompt from "./context/SummaryPrompt.js"
/** The scripted model for tests. */
export * as TestModel from "./model/TestModel.js"
/** Token accounting for requests. */
export * as TokenEstimate from "./context/TokenEstimate.js"
/** The tool contract. */
export * as Tool from "./tool/Tool.js"
/** The turns of a conversation: where each starts (a prompt, not tool results). */
export * as Turns from "./context/Turns.js"
/** The tool result budget stage. */
export * as ToolResultBudget from "./context/ToolResultBudget.js"
/** The tool registry. */
export * as ToolRegistry from "./tool/ToolRegistry.js"
/** The tool runtime. */
export * as ToolRuntime from "./tool/ToolRuntime.js"
/** Turn loop events. */
export * as TurnEvent from "./turn/TurnEvent.js"
/** The turn loop. */
export * as TurnLoop from "./turn/TurnLoop.js"
/** The JSON Schema a final answer must match (`--json-schema`, `outputFormat`), checked and compiled. */
export * as OutputSchema from "./output/OutputSchema.js"
/** Structured output as a turn policy: the turn ends on an accepted answer, retried with a bounded budget. */
export * as StructuredOutput from "./output/StructuredOutput.js"
/** The `StructuredOutput` tool, whose input schema is the output schema. */
export * as StructuredOutputTool from "./output/StructuredOutputTool.js"
/** Hooks: Claude Code's hook events, their inputs and outputs, matchers, and the service that runs them. */
export * as Hooks from "./hook/Hooks.js"
/** Hook events and their inputs (Claude Code's `HookInput`). */
export * as HookEvent from "./hook/HookEvent.js"
/** Hook matchers: exact names, `|` lists, `*`, regular expressions. */
export * as HookMatcher from "./hook/HookMatcher.js"
/** A hook's JSON output and how one run reads. */
export * as HookOutput from "./hook/HookOutput.js"
/** The merged outcome of an event's hooks. */
export * as HookOutcome from "./hook/HookOutcome.js"
/** Command hooks: a process with the event's JSON on stdin. */
export * as CommandHook from "./hook/CommandHook.js"
/** The hooks around a tool call (PreToolUse, Notification, PostToolUse). */
export * as ToolHooks from "./hook/ToolHooks.js"
/** The hooks of a session's turns (SessionStart, UserPromptSubmit, Stop, SubagentStop, SessionEnd, PreCompact). */
export * as SessionHooks from "./hook/SessionHooks.js"
/** The journal: everything non-deterministic that crossed a session's boundary, as JSON lines. */
export * as Journal from "./record/Journal.js"
/** The journal's lines and their format. */
export * as JournalEntry from "./record/JournalEntry.js"
/** The recording layer over the base model: every call's body, reads with their offsets, and end. */
export * as RecordingModel from "./record/RecordingModel.js"
/** The replay layer: a journal's calls served back in order, and where a replay diverged. */
export * as ReplayModel from "./record/ReplayModel.js"
/** Where two request bodies first differ, and a readable diff. */
export * as RequestDiff from "./record/RequestDiff.js"
/** The recording layer of tool calls: each call's input, duration and outcome, journaled. */
export * as RecordingTools from "./record/RecordingTools.js"
/** Tool calls served from a journal instead of run. */
export * as ReplayTools from "./record/ReplayTools.js"
/** Counts the tool calls running now (a live replay holds its virtual clock while any runs). */
export * as ToolsInFlight from "./record/ToolsInFlight.js"
/** What a session's journal recorded of its tool calls, for a resume after a crash. */
export * as RecordedResults from "./record/RecordedResults.js"
/** Durable turns: a turn a crash left open runs on when its recorded session is resumed. */
export * as DurableTurn from "./record/DurableTurn.js"
