/**
 * The session's file state: a record extends the latest version in place (no copy of the map per
 * read), reads of the latest version are a map's, and the transcript writes exactly the paths
 * recorded since its last checkpoint, whatever the order of records, checkpoints and plain maps set
 * over it: loading the file gives back the state.
 */
import { assert, describe, it } from "@effect/vitest"
import { FileState, Ids, SessionState, SessionStore, TranscriptEntry, TranscriptRecorder } from "@keel/core"
import { Effect, FastCheck as fc, Ref } from "effect"

const cwd = "/work/project"

describe("FileState", () => {
  it("a record extends the latest version in place; an older version or a plain map is copied first", () => {
    const v1 = FileState.set(new Map([["/a", 1]]), "/b", 2)
    const v2 = FileState.set(v1, "/c", 3)
    // The same map underneath: recording did not copy the 2 entries already there.
    assert.strictEqual(v2.lineage, v1.lineage)
    assert.deepStrictEqual([...v2], [["/a", 1], ["/b", 2], ["/c", 3]])
    assert.strictEqual(v2.get("/c"), 3)
    assert.strictEqual(v2.size, 3)
    // Nothing changes: the same version.
    assert.strictEqual(FileState.set(v2, "/c", 3), v2)
    // From an older version: a new lineage, and the latest is left alone.
    const branch = FileState.set(v1, "/d", 4)
    assert.notStrictEqual(branch.lineage, v1.lineage)
    assert.deepStrictEqual([...branch].map(([p]) => p), ["/a", "/b", "/c", "/d"])
    assert.deepStrictEqual([...v2].map(([p]) => p), ["/a", "/b", "/c"])
  })

  it("changedSince: the paths recorded after an older version of the same lineage, else undefined", () => {
    const v1 = FileState.set(new Map(), "/a", 1)
    const v2 = FileState.set(FileState.set(FileState.set(v1, "/b", 2), "/a", 5), "/b", 6)
    assert.deepStrictEqual([...FileState.changedSince(v2, v1)!], ["/b", "/a"])
    assert.deepStrictEqual([...FileState.changedSince(v2, v2)!], [])
    assert.isUndefined(FileState.changedSince(v2, new Map()))
    assert.isUndefined(FileState.changedSince(new Map(v2), v1))
  })

  /** Operations on a session: record a path, checkpoint, or replace the state with a plain map. */
  type Op =
    | { readonly _tag: "record"; readonly path: number; readonly mtime: number }
    | { readonly _tag: "checkpoint" }
    | { readonly _tag: "replace"; readonly entries: ReadonlyArray<readonly [number, number]> }
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ _tag: fc.constant("record" as const), path: fc.nat(6), mtime: fc.nat(3) }) },
    { weight: 2, arbitrary: fc.record({ _tag: fc.constant("checkpoint" as const) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        _tag: fc.constant("replace" as const),
        entries: fc.array(fc.tuple(fc.nat(6), fc.nat(3)), { maxLength: 4 })
      })
    }
  )

  it.effect("the transcript's file_state entries replay to the state, after any records, checkpoints and replacements", () =>
    Effect.gen(function*() {
      let n = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(op, { maxLength: 40 }), (ops) =>
            Effect.runPromise(Effect.gen(function*() {
              const id = `files-${n++}`
              const store = SessionStore.make({ home: "/keel", files: SessionStore.memoryFiles() })
              const state = yield* SessionState.make(id)
              const recorder = yield* TranscriptRecorder.make({
                store,
                cwd,
                sessionId: id,
                state,
                primaryModel: Effect.succeed("claude-test"),
                uuid: Ids.seeded(1).uuid
              })
              for (const o of ops) {
                if (o._tag === "record") {
                  yield* FileState.record(`/f${o.path}`, o.mtime).pipe(Effect.provideService(SessionState.SessionState, state))
                } else if (o._tag === "checkpoint") {
                  yield* recorder.checkpoint()
                } else {
                  // Replaced whole (as a resume restores it): the paths dropped stay in the file, as before.
                  const current = yield* Ref.get(state.fileState)
                  yield* Ref.set(state.fileState, new Map([...current, ...o.entries.map(([p, m]) => [`/f${p}`, m] as const)]))
                }
              }
              yield* recorder.checkpoint()
              const expected = [...(yield* Ref.get(state.fileState))].sort()
              if (expected.length === 0) return
              const entries = yield* store.loadEntries(cwd, id)
              const replayed = new Map<string, number>()
              for (const e of entries.entries as ReadonlyArray<TranscriptEntry.Entry>) {
                if (e.type === "file_state") for (const [p, m] of Object.entries(e.files)) replayed.set(p, m)
              }
              assert.deepStrictEqual([...replayed].sort(), expected)
            }))
          ),
          { numRuns: 200 }
        )
      )
    }))
})
