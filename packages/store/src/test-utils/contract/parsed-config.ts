import { describe, expect, it } from 'vitest'
import type { ParsedConfigEntry } from '../../parsed-config.js'
import { freshStoreEach, hour, sha256, t0, type OpenStore } from './fixtures.js'

/** The ParsedConfigStore port: parse results of tenant files, by digest. */
export function parsedConfigContract(open: OpenStore): void {
  describe('parsedConfig', () => {
    const store = freshStoreEach(open)

    /** The key of the `i`th tenant file: a SHA-256 digest, as the issuer computes them. */
    const fileKey = (i: number): string => sha256(`tenant-file-${i}`)
    /** `count` entries from the `from`th file on; values of about 1 KB, like sealed results. */
    const entries = (count: number, from = 0, tag = 'sealed'): ParsedConfigEntry[] =>
      Array.from({ length: count }, (_, i) => ({
        key: fileKey(from + i),
        value: `${tag}-${from + i}:${'x'.repeat(1000)}`,
      }))
    const byKey = (list: readonly ParsedConfigEntry[]): ParsedConfigEntry[] =>
      [...list].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))

    it('lists what was added; an existing key takes the new value and stamp', async () => {
      expect(await store().parsedConfig.list()).toEqual([])
      expect(await store().parsedConfig.add([], t0)).toBe(0)
      const first = entries(3)
      expect(await store().parsedConfig.add(first, t0)).toBe(3)
      expect(byKey(await store().parsedConfig.list())).toEqual(byKey(first))
      const again = [{ key: fileKey(1), value: 'other' }, ...entries(1, 3)]
      expect(await store().parsedConfig.add(again, t0 + hour)).toBe(2)
      const [zero, , two, three] = entries(4)
      expect(byKey(await store().parsedConfig.list())).toEqual(
        byKey([zero, { key: fileKey(1), value: 'other' }, two, three].flatMap((e) => e ?? [])),
      )
      // Replaced at t0 + hour: a prune of what is older than that leaves it.
      expect(await store().parsedConfig.prune(new Set(), t0 + hour)).toBe(2)
      expect(byKey(await store().parsedConfig.list())).toEqual(
        byKey([{ key: fileKey(1), value: 'other' }, three].flatMap((e) => e ?? [])),
      )
    })

    it('keeps the first entry of a key given twice in one call', async () => {
      const key = fileKey(0)
      const twice = [
        { key, value: 'first' },
        { key, value: 'second' },
      ]
      expect(await store().parsedConfig.add(twice, t0)).toBe(1)
      expect(await store().parsedConfig.list()).toEqual([{ key, value: 'first' }])
    })

    it('stores any text up to 1 MiB as it was given', async () => {
      const values = ['', 'é ☃ 𝄞 \t\n', 'z'.repeat(1_048_576)]
      const added = values.map((value, i) => ({ key: fileKey(i), value }))
      expect(await store().parsedConfig.add(added, t0)).toBe(3)
      expect(byKey(await store().parsedConfig.list())).toEqual(byKey(added))
    })

    it('adds 10,000 entries in one call and lists them', async () => {
      const many = entries(10_000)
      const started = performance.now()
      expect(await store().parsedConfig.add(many, t0)).toBe(10_000)
      const listed = await store().parsedConfig.list()
      // One transaction: seconds would mean a commit per entry.
      expect(performance.now() - started).toBeLessThan(10_000)
      expect(listed).toHaveLength(10_000)
      expect(byKey(listed)).toEqual(byKey(many))
      expect(await store().parsedConfig.add(many, t0 + 1)).toBe(10_000)
      expect(await store().parsedConfig.list()).toHaveLength(10_000)
    })

    it('prunes only the entries stamped before `before` and not kept, and counts them', async () => {
      // 0-99 stamped at t0, 100-199 at t0 + hour.
      await store().parsedConfig.add(entries(100), t0)
      await store().parsedConfig.add(entries(100, 100), t0 + hour)
      // 20,000 keys to keep: the even files among the old ones, and keys of files never added.
      const keep = new Set<string>()
      for (let i = 0; i < 100; i += 2) keep.add(fileKey(i))
      for (let i = 1_000_000; keep.size < 20_000; i++) keep.add(fileKey(i))
      // Stamped at `before` exactly is not before it.
      expect(await store().parsedConfig.prune(keep, t0)).toBe(0)
      expect(await store().parsedConfig.prune(keep, t0 + hour)).toBe(50)
      expect(await store().parsedConfig.prune(keep, t0 + hour)).toBe(0)
      const left = (await store().parsedConfig.list()).map(({ key }) => key).sort()
      const expected = [
        ...Array.from({ length: 50 }, (_, i) => fileKey(2 * i)),
        ...Array.from({ length: 100 }, (_, i) => fileKey(100 + i)),
      ].sort()
      expect(left).toEqual(expected)
      // Nothing kept: everything before the bound goes.
      expect(await store().parsedConfig.prune(new Set(), t0 + hour + 1)).toBe(150)
      expect(await store().parsedConfig.list()).toEqual([])
    })

    const valid = entries(2)
    it.each<[string, readonly unknown[], number]>([
      ['a key in upper case', [...valid, { key: fileKey(9).toUpperCase(), value: 'v' }], t0],
      ['a key of 63 characters', [...valid, { key: fileKey(9).slice(1), value: 'v' }], t0],
      ['a key that is not hex', [...valid, { key: 'g'.repeat(64), value: 'v' }], t0],
      ['a key that is not a string', [...valid, { key: 42, value: 'v' }], t0],
      ['a value over 1 MiB', [...valid, { key: fileKey(9), value: 'z'.repeat(1_048_577) }], t0],
      ['a value that is not a string', [...valid, { key: fileKey(9), value: { a: 1 } }], t0],
      ['a value with U+0000', [...valid, { key: fileKey(9), value: 'a\u0000b' }], t0],
      ['a value with a lone surrogate', [...valid, { key: fileKey(9), value: 'x\udc00' }], t0],
      ['an entry that is null', [...valid, null], t0],
      ['a negative now', valid, -1],
      ['a fractional now', valid, t0 + 0.5],
      ['a now of NaN', valid, Number.NaN],
      ['a now of Infinity', valid, Number.POSITIVE_INFINITY],
    ])('refuses %s with a TypeError, storing nothing of the call', async (_, asked, now) => {
      await expect(store().parsedConfig.add(asked as ParsedConfigEntry[], now)).rejects.toThrow(
        TypeError,
      )
      expect(await store().parsedConfig.list()).toEqual([])
    })

    it('refuses a bad before or key to keep with a TypeError, deleting nothing', async () => {
      await store().parsedConfig.add(valid, t0)
      for (const [keep, before] of [
        [new Set<string>(), -1],
        [new Set<string>(), 1.5],
        [new Set<string>(), Number.NaN],
        [new Set(['not-a-digest']), t0 + 1],
        [new Set([fileKey(0).toUpperCase()]), t0 + 1],
        [[fileKey(0)] as unknown as Set<string>, t0 + 1],
      ] as const) {
        await expect(store().parsedConfig.prune(keep, before)).rejects.toThrow(TypeError)
      }
      expect(byKey(await store().parsedConfig.list())).toEqual(byKey(valid))
    })

    it('stores one value per key when two calls add the same keys at once', async () => {
      const ours = entries(500, 0, 'ours')
      // The other call in the reverse order: adapters must not deadlock on it.
      const theirs = entries(500, 0, 'theirs').reverse()
      const counts = await Promise.all([
        store().parsedConfig.add(ours, t0),
        store().parsedConfig.add(theirs, t0),
      ])
      expect(counts).toEqual([500, 500])
      const listed = await store().parsedConfig.list()
      expect(new Set(listed.map(({ key }) => key)).size).toBe(500)
      const offered = new Set([...ours, ...theirs].map(({ key, value }) => `${key}=${value}`))
      for (const { key, value } of listed) expect(offered).toContain(`${key}=${value}`)
    })
  })
}
