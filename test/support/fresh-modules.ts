/**
 * Setup file (vitest.config.ts): each test file starts with fresh copies of the repository's own
 * modules. Workers are shared between files (`isolate: false`, so Effect, the SDK and the other
 * dependencies load once per worker, not once per file), but module state such as BashGrammar's
 * loaded parser or ToolOutputDir's once-per-process sweep, and a file's `vi.mock`s, must not carry
 * over from one file to the next: this drops every module vitest evaluated (the sources under test,
 * the test support), as a fresh worker would.
 */
import { vi } from "vitest"

vi.resetModules()
