import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { buildInHalves } from './halves.js'
import type { Built } from './halves.js'

/** A build that throws for any part holding an item of `bad`, and records what it built. */
function builder(bad: ReadonlySet<number>) {
  const calls: number[][] = []
  const built: number[] = []
  const build = (part: readonly number[]): Promise<Built> => {
    calls.push([...part])
    const failing = part.find((item) => bad.has(item))
    if (failing !== undefined) {
      return Promise.resolve({ ok: false, error: new Error(`item ${failing} cannot be built`) })
    }
    built.push(...part)
    return Promise.resolve({ ok: true })
  }
  return { build, calls, built }
}

const range = (count: number): number[] => Array.from({ length: count }, (_, index) => index)

describe('buildInHalves', () => {
  it('builds everything with one call when nothing fails, and nothing when there is nothing', async () => {
    const { build, calls, built } = builder(new Set())
    expect(await buildInHalves(range(10), { build })).toEqual([])
    expect(calls).toEqual([range(10)])
    expect(built).toEqual(range(10))
    expect(await buildInHalves([], { build })).toEqual([])
    expect(calls).toHaveLength(1)
  })

  it('finds the one item among 64 that fails in 2·log2(64) calls, with its own error', async () => {
    const { build, calls, built } = builder(new Set([41]))
    const refusals = await buildInHalves(range(64), { build })
    expect(refusals).toEqual([{ item: 41, error: new Error('item 41 cannot be built') }])
    expect(built.sort((a, b) => a - b)).toEqual(range(64).filter((item) => item !== 41))
    expect(calls.length).toBeLessThanOrEqual(1 + 2 * 6)
  })

  it('splits a second half known to fail without building it whole', async () => {
    const { build, calls } = builder(new Set([3]))
    await buildInHalves(range(4), { build })
    // [0..3] fails; [0, 1] is built, so [2, 3] holds the failure: its halves are tried alone.
    expect(calls).toEqual([[0, 1, 2, 3], [0, 1], [2], [3]])
  })

  it('refuses a part whole, without a build or a split, when `refuse` says so', async () => {
    const { build, calls } = builder(new Set([0]))
    const veto = new Error('no tenant would be left')
    // A part that holds item 1 but not item 0 is refused: [1] after [0] failed alone.
    const refusals = await buildInHalves(range(4), {
      build,
      refuse: (part) => (part.includes(1) && !part.includes(0) ? veto : undefined),
    })
    expect(refusals).toEqual([
      { item: 0, error: new Error('item 0 cannot be built') },
      { item: 1, error: veto },
    ])
    expect(calls).toEqual([[0, 1, 2, 3], [0, 1], [0], [2, 3]])
  })

  it('ends on what a build throws, without trying the rest', async () => {
    const calls: number[][] = []
    const build = (part: readonly number[]): Promise<Built> => {
      calls.push([...part])
      if (part.length === 2) return Promise.reject(new Error('unexpected'))
      return Promise.resolve({ ok: false, error: new Error('cannot be built') })
    }
    await expect(buildInHalves(range(4), { build })).rejects.toThrow('unexpected')
    expect(calls).toEqual([range(4), [0, 1]])
  })

  it('refuses exactly the items that fail, in their order, and builds every other item once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 0, max: 200 })
          .chain((count) =>
            fc.tuple(
              fc.constant(count),
              fc.subarray(range(count), { maxLength: Math.min(count, 8) }),
            ),
          ),
        async ([count, failing]) => {
          const bad = new Set(failing)
          const { build, calls, built } = builder(bad)
          const refusals = await buildInHalves(range(count), { build })
          expect(refusals.map((refusal) => refusal.item)).toEqual(failing)
          expect(built.sort((a, b) => a - b)).toEqual(range(count).filter((item) => !bad.has(item)))
          // Each call builds a run of neighbours, as the halves are.
          for (const call of calls) {
            call.forEach((item, at) => at === 0 || expect(item).toBe((call[at - 1] ?? 0) + 1))
          }
          // About 2·log2(n) calls per item that fails, whatever n.
          const depth = Math.ceil(Math.log2(Math.max(count, 1)))
          expect(calls.length).toBeLessThanOrEqual(1 + 2 * bad.size * (depth + 1))
        },
      ),
    )
  })
})
