import { describe, expect, it } from 'vitest'
import { createMemoryReplayCache } from './dpop-replay-cache.js'
import { isVerifierError } from './errors.js'

function clock(start = 1_000_000) {
  let at = start
  return { now: () => at, advance: (ms: number) => (at += ms) }
}

function refusal(run: () => unknown): { code?: string; retryAfter?: number } {
  try {
    run()
  } catch (error) {
    if (isVerifierError(error)) return { code: error.code, retryAfter: error.retryAfter }
    throw error
  }
  return {}
}

describe('createMemoryReplayCache', () => {
  it('accepts a jti once until it expires, then again', () => {
    const time = clock()
    const cache = createMemoryReplayCache({ now: time.now })
    expect(cache.add('a', time.now() + 1000)).toBe(true)
    expect(cache.add('a', time.now() + 1000)).toBe(false)
    expect(cache.add('b', time.now() + 1000)).toBe(true)
    time.advance(999)
    expect(cache.add('a', time.now() + 1000)).toBe(false)
    time.advance(1)
    expect(cache.add('a', time.now() + 1000)).toBe(true)
  })

  it('drops expired entries first when full', () => {
    const time = clock()
    const cache = createMemoryReplayCache({ max: 3, now: time.now })
    // Out of expiry order, so that the oldest entry is not the first to expire.
    expect(cache.add('long', time.now() + 5000)).toBe(true)
    expect(cache.add('short-1', time.now() + 1000)).toBe(true)
    expect(cache.add('short-2', time.now() + 1000)).toBe(true)
    time.advance(1000)
    expect(cache.add('new-1', time.now() + 5000)).toBe(true)
    expect(cache.add('new-2', time.now() + 5000)).toBe(true)
    // The unexpired entry is still remembered.
    expect(cache.add('long', time.now() + 5000)).toBe(false)
  })

  it('refuses rather than forgets when full and nothing has expired', () => {
    const time = clock()
    const cache = createMemoryReplayCache({ max: 2, now: time.now })
    expect(cache.add('a', time.now() + 65_000)).toBe(true)
    expect(cache.add('b', time.now() + 65_000)).toBe(true)
    expect(refusal(() => cache.add('c', time.now() + 65_000))).toEqual({
      code: 'ERR_REPLAY_CACHE_UNAVAILABLE',
      retryAfter: 65,
    })
    // The remembered ones stay remembered: a replay is still a replay, not a 503.
    expect(cache.add('a', time.now() + 65_000)).toBe(false)
    time.advance(60_000)
    expect(refusal(() => cache.add('c', time.now() + 65_000)).retryAfter).toBe(5)
    time.advance(5_000)
    expect(cache.add('c', time.now() + 65_000)).toBe(true)
  })

  it('checks its options', () => {
    for (const max of [0, -1, 1.5, Number.NaN]) {
      expect(() => createMemoryReplayCache({ max })).toThrow(
        new TypeError('createMemoryReplayCache: options.max must be a positive integer'),
      )
    }
  })
})
