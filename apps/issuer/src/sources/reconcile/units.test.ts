import type { ConfigFile, Tenant } from '@tessera/config-schema'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createDisjointSets, unitsOf } from './units.js'
import type { Unit } from './units.js'

/** Only the names count here. */
const tenant = (name: string): Tenant => ({ name, providers: [] }) as unknown as Tenant
const file = (name: string, tenants: readonly string[]): ConfigFile => ({
  file: name,
  tenants: tenants.map(tenant),
  issues: [],
})

/** The groups of `keys` that `pairs` connect, by walking the pairs (no union-find). */
function groupsByWalk(keys: readonly number[], pairs: readonly [number, number][]): number[][] {
  const next = new Map<number, number[]>(keys.map((key) => [key, []]))
  for (const [a, b] of pairs) {
    next.get(a)?.push(b)
    next.get(b)?.push(a)
  }
  const seen = new Set<number>()
  const groups: number[][] = []
  for (const key of keys) {
    if (seen.has(key)) continue
    const group: number[] = []
    const queue = [key]
    seen.add(key)
    for (let at = queue.pop(); at !== undefined; at = queue.pop()) {
      group.push(at)
      for (const other of next.get(at) ?? []) {
        if (!seen.has(other)) {
          seen.add(other)
          queue.push(other)
        }
      }
    }
    groups.push(group.sort((x, y) => x - y))
  }
  return groups
}

describe('createDisjointSets', () => {
  it('puts two keys in one set exactly when unions connect them', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 40 })
          .chain((count) =>
            fc.tuple(
              fc.constant(count),
              fc.array(fc.tuple(fc.nat(count - 1), fc.nat(count - 1)), { maxLength: 60 }),
            ),
          ),
        ([count, pairs]) => {
          const keys = Array.from({ length: count }, (_, key) => key)
          const sets = createDisjointSets<number>()
          for (const [a, b] of pairs) sets.union(a, b)
          for (const group of groupsByWalk(keys, pairs)) {
            const [first] = group
            for (const key of group) expect(sets.root(key)).toBe(sets.root(first ?? key))
          }
          const roots = new Set(keys.map((key) => sets.root(key)))
          expect(roots.size).toBe(groupsByWalk(keys, pairs).length)
        },
      ),
    )
  })

  it('follows a chain of 100 000 unions without running out of stack', () => {
    const sets = createDisjointSets<number>()
    for (let key = 1; key < 100_000; key++) sets.union(key - 1, key)
    expect(sets.root(0)).toBe(sets.root(99_999))
  })
})

describe('unitsOf', () => {
  const lastGoodOf = (files: Record<string, ConfigFile>) => (name: string) => files[name]

  it('makes one unit of the files a tenant moves between, and one of each other file', () => {
    const lastGood = lastGoodOf({
      'a.yaml': file('a.yaml', ['x']),
      'c.yaml': file('c.yaml', ['z']),
    })
    const units = unitsOf({
      // x moves from a.yaml to b.yaml; c.yaml changes its own tenant.
      accepted: [
        { name: 'a.yaml', file: file('a.yaml', []) },
        { name: 'b.yaml', file: file('b.yaml', ['x']) },
        { name: 'c.yaml', file: file('c.yaml', ['z']) },
      ],
      removed: [],
      put: new Map([
        ['x', tenant('x')],
        ['z', tenant('z')],
      ]),
      remove: [],
      lastGood,
    })
    expect(units.map((unit) => unit.files)).toEqual([['a.yaml', 'b.yaml'], ['c.yaml']])
    expect(units.map((unit) => unit.put.map((one) => one.name))).toEqual([['x'], ['z']])
  })

  it('rebuilds a tenant of no changed file alone, leaves out units with nothing to build, and puts removals last', () => {
    const lastGood = lastGoodOf({ 'gone.yaml': file('gone.yaml', ['old']) })
    const units = unitsOf({
      accepted: [{ name: 'same.yaml', file: file('same.yaml', ['kept']) }],
      removed: ['gone.yaml'],
      // `kept` is unchanged (not put); `other` uses a changed provider script.
      put: new Map([['other', tenant('other')]]),
      remove: ['old'],
      lastGood,
    })
    expect(units).toEqual<Unit[]>([
      { files: [], put: [tenant('other')], remove: [] },
      { files: ['gone.yaml'], put: [], remove: ['old'] },
    ])
  })

  it('places every tenant put or removed in exactly one unit, with the files it moves between', () => {
    const names = ['f0', 'f1', 'f2', 'f3', 'f4', 'f5']
    fc.assert(
      fc.property(
        // For each of 12 tenants: the file of its last good version and the file it is in now.
        fc.array(fc.tuple(fc.option(fc.nat(5)), fc.option(fc.nat(5))), {
          minLength: 12,
          maxLength: 12,
        }),
        fc.array(fc.nat(5), { maxLength: 3 }),
        (moves, gone) => {
          const removedFiles = names.filter((_, at) => gone.includes(at))
          const before = new Map<string, string[]>()
          const after = new Map<string, string[]>()
          moves.forEach(([from, to], at) => {
            if (from !== null)
              before.set(names[from] ?? '', [...(before.get(names[from] ?? '') ?? []), `t${at}`])
            if (to !== null && !gone.includes(to)) {
              after.set(names[to] ?? '', [...(after.get(names[to] ?? '') ?? []), `t${at}`])
            }
          })
          const lastGood = (name: string) => file(name, before.get(name) ?? [])
          const accepted = names
            .filter((name) => !removedFiles.includes(name))
            .map((name) => ({ name, file: file(name, after.get(name) ?? []) }))
          const put = new Map<string, Tenant>()
          const remove: string[] = []
          moves.forEach(([from, to], at) => {
            if (to !== null && !gone.includes(to)) put.set(`t${at}`, tenant(`t${at}`))
            else if (from !== null) remove.push(`t${at}`)
          })
          const units = unitsOf({ accepted, removed: removedFiles, put, remove, lastGood })

          const placed = units.flatMap((unit) => [
            ...unit.put.map((one) => one.name),
            ...unit.remove,
          ])
          expect(placed.sort()).toEqual([...put.keys(), ...remove].sort())
          const unitOfFile = new Map<string, Unit>()
          for (const unit of units) for (const name of unit.files) unitOfFile.set(name, unit)
          moves.forEach(([from, to], at) => {
            if (from === null || to === null || gone.includes(to)) return
            const [a, b] = [unitOfFile.get(names[from] ?? ''), unitOfFile.get(names[to] ?? '')]
            expect(a).toBeDefined()
            expect(a).toBe(b)
            expect(a?.put.map((one) => one.name)).toContain(`t${at}`)
          })
          for (const unit of units) expect(unit.put.length + unit.remove.length).toBeGreaterThan(0)
          const removing = units.map((unit) => unit.remove.length > unit.put.length)
          expect(removing).toEqual([...removing].sort((x, y) => Number(x) - Number(y)))
        },
      ),
    )
  })
})
