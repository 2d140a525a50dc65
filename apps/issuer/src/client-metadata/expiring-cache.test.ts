import { describe, expect, it } from 'vitest'
import { ExpiringCache, freshnessMs } from './expiring-cache.js'

const MINUTE = 60_000
const BOUNDS = { minMs: 5 * MINUTE, maxMs: 24 * 60 * MINUTE }

describe('freshnessMs', () => {
  const now = Date.parse('2026-11-28T12:00:00Z')
  it.each([
    ['max-age', { 'cache-control': 'public, max-age=3600' }, 60 * MINUTE],
    ['max-age less Age', { 'cache-control': 'max-age=3600', age: '600' }, 50 * MINUTE],
    ['a short max-age, raised to the minimum', { 'cache-control': 'max-age=10' }, 5 * MINUTE],
    [
      'a long max-age, lowered to the maximum',
      { 'cache-control': 'max-age=999999' },
      1440 * MINUTE,
    ],
    ['no-store', { 'cache-control': 'no-store, max-age=3600' }, 5 * MINUTE],
    ['no-cache', { 'cache-control': 'no-cache' }, 5 * MINUTE],
    [
      'Expires less Date',
      { expires: 'Sat, 28 Nov 2026 14:00:00 GMT', date: 'Sat, 28 Nov 2026 12:00:00 GMT' },
      120 * MINUTE,
    ],
    ['Expires, without Date', { expires: 'Sat, 28 Nov 2026 13:00:00 GMT' }, 60 * MINUTE],
    ['an Expires that is no date', { expires: '0' }, 5 * MINUTE],
    [
      'max-age over Expires',
      { 'cache-control': 'max-age=1200', expires: 'Sat, 28 Nov 2026 20:00:00 GMT' },
      20 * MINUTE,
    ],
    ['no header', {}, 5 * MINUTE],
  ])('%s', (_name, headers, expected) => {
    expect(freshnessMs(headers, now, BOUNDS)).toBe(expected)
  })
})

describe('ExpiringCache', () => {
  it('shares one load among concurrent lookups, and serves it until it expires', async () => {
    let now = 0
    const cache = new ExpiringCache<string>(10, () => now)
    let loads = 0
    const load = async () => {
      loads += 1
      await new Promise((resolve) => setTimeout(resolve, 20))
      return { value: `v${loads}`, ttlMs: 1000 }
    }
    expect(await Promise.all([cache.get('a', load), cache.get('a', load)])).toEqual(['v1', 'v1'])
    expect(loads).toBe(1)
    now = 999
    expect(await cache.get('a', load)).toBe('v1')
    now = 1020
    expect(await cache.get('a', load)).toBe('v2')
    expect(loads).toBe(2)
  })

  it('keeps at most its bound of keys, dropping the least recently used', async () => {
    const cache = new ExpiringCache<string>(2, () => 0)
    const loads: string[] = []
    const load = (key: string) => () => {
      loads.push(key)
      return Promise.resolve({ value: key, ttlMs: 60_000 })
    }
    await cache.get('a', load('a'))
    await cache.get('b', load('b'))
    await cache.get('a', load('a')) // a is now the most recently used
    await cache.get('c', load('c')) // b goes
    expect(cache.size).toBe(2)
    await cache.get('a', load('a'))
    await cache.get('b', load('b'))
    expect(loads).toEqual(['a', 'b', 'c', 'b'])
  })

  it('forgets a load that rejected', async () => {
    const cache = new ExpiringCache<string>(10, () => 0)
    await expect(cache.get('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await cache.get('a', () => Promise.resolve({ value: 'ok', ttlMs: 1 }))).toBe('ok')
  })
})
