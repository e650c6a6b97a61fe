/**
 * Reading a tool call's outcome in tests: the output of a call expected to succeed, the message of
 * one expected to fail.
 */
import { assert } from "@effect/vitest"
import { Tool } from "@keel/core"
import { Either } from "effect"

/** The output; fails the test with the error's message when the call failed. */
export const ok = (e: Either.Either<Tool.CallResult, Tool.ToolError>): string => {
  if (Either.isLeft(e)) assert.fail(`expected output, got error: ${e.left.message}`)
  return Tool.outputOf(e.right) as string
}

/** The structured result; fails the test when the call failed. */
export const structured = (e: Either.Either<Tool.CallResult, Tool.ToolError>): unknown => {
  if (Either.isLeft(e)) assert.fail(`expected a result, got error: ${e.left.message}`)
  return Tool.structuredOf(e.right)
}

/** The error's message; fails the test when the call succeeded. */
export const err = (e: Either.Either<Tool.CallResult, Tool.ToolError>): string => {
  if (Either.isRight(e)) assert.fail(`expected an error, got: ${String(e.right)}`)
  return e.left.message
}
