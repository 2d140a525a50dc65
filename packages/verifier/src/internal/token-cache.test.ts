import { describe, expect, it } from 'vitest'
import { TokenCache } from './token-cache.js'

describe('TokenCache', () => {
  it('keys entries by a SHA-256 of the token, never the token itself', () => {
    const key = TokenCache.keyOf('header.payload.signature')
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(key).not.toContain('payload')
  })

  it('evicts the least recently used entry past its bound', () => {
    const cache = new TokenCache<number>(2)
    cache.set('a', { result: 1, expiresAt: 100 })
    cache.set('b', { result: 2, expiresAt: 100 })
    expect(cache.get('a', 0)?.result).toBe(1)
    cache.set('c', { result: 3, expiresAt: 100 })
    expect(cache.get('b', 0)).toBeUndefined()
    expect(cache.get('a', 0)?.result).toBe(1)
    expect(cache.get('c', 0)?.result).toBe(3)
    expect(cache.size).toBe(2)
  })

  it('keeps the order exact when the most recent entry is hit again and again', () => {
    const cache = new TokenCache<number>(2)
    cache.set('a', { result: 1, expiresAt: 100 })
    cache.set('b', { result: 2, expiresAt: 100 })
    expect(cache.get('b', 0)?.result).toBe(2)
    expect(cache.get('b', 0)?.result).toBe(2)
    cache.set('c', { result: 3, expiresAt: 100 })
    expect(cache.get('a', 0)).toBeUndefined()
    expect(cache.get('b', 0)?.result).toBe(2)
    cache.set('d', { result: 4, expiresAt: 10 })
    expect(cache.get('c', 0)).toBeUndefined()
    expect(cache.get('d', 10)).toBeUndefined()
    expect(cache.get('b', 0)?.result).toBe(2)
    cache.set('e', { result: 5, expiresAt: 100 })
    cache.set('f', { result: 6, expiresAt: 100 })
    expect(cache.get('b', 0)).toBeUndefined()
    expect(cache.get('e', 0)?.result).toBe(5)
    expect(cache.size).toBe(2)
  })

  it('drops an entry at its expiry', () => {
    const cache = new TokenCache<number>(2)
    cache.set('a', { result: 1, expiresAt: 100 })
    expect(cache.get('a', 99)?.result).toBe(1)
    expect(cache.get('a', 100)).toBeUndefined()
    expect(cache.size).toBe(0)
  })
})
