import type { FailureCounter, FailureLimit } from '@tessera/grants'
import { describe, expect, it } from 'vitest'
import { freshStoreEach, minute, t0, type OpenStore } from './fixtures.js'
import { recordConcurrently } from './races.js'

const windowMs = 15 * minute
const at = (now: number) => ({ now, windowMs })
const client = 'client:aaaa'
const address = 'addr:bbbb'
const limits = (clientLimit = 3, addressLimit = 5): FailureLimit[] => [
  { key: client, limit: clientLimit },
  { key: address, limit: addressLimit },
]

/** The FailureCounter port (clientAuthFailures): failed client authentications per window. */
export function clientAuthFailuresContract(open: OpenStore): void {
  describe('client auth failures', () => {
    const store = freshStoreEach(open)
    const counter = (): FailureCounter => store().clientAuthFailures

    it('reads nothing for keys that never failed', async () => {
      expect(await counter().failures([client, address], t0)).toEqual([undefined, undefined])
    })

    it('counts a failure on every key, in one window per key', async () => {
      expect(await counter().recordFailure(limits(), at(t0))).toEqual({ recorded: true })
      expect(await counter().recordFailure(limits(), at(t0 + minute))).toEqual({ recorded: true })
      expect(await counter().failures([address, client, 'other'], t0 + 2 * minute)).toEqual([
        { count: 2, resetAt: t0 + windowMs },
        { count: 2, resetAt: t0 + windowMs },
        undefined,
      ])
    })

    it('refuses past a limit, names the full key, and counts nothing on any key', async () => {
      for (let i = 0; i < 3; i++) await counter().recordFailure(limits(), at(t0))
      expect(await counter().recordFailure(limits(), at(t0 + minute))).toEqual({
        recorded: false,
        blocked: client,
        resetAt: t0 + windowMs,
      })
      expect(await counter().failures([client, address], t0 + minute)).toEqual([
        { count: 3, resetAt: t0 + windowMs },
        { count: 3, resetAt: t0 + windowMs },
      ])
      // Another client from the same address fills the address's window: 2 more, then refused.
      const other = [{ key: 'client:cccc', limit: 3 }, limits()[1] as FailureLimit]
      expect(await recordConcurrently([counter()], 4, other, t0 + minute)).toBe(2)
      expect(await counter().recordFailure(other, at(t0 + minute))).toEqual({
        recorded: false,
        blocked: address,
        resetAt: t0 + windowMs,
      })
      expect(await counter().failures(['client:cccc'], t0 + minute)).toEqual([
        { count: 2, resetAt: t0 + minute + windowMs },
      ])
    })

    it('opens a new window at 1 once the stored one has ended', async () => {
      for (let i = 0; i < 3; i++) await counter().recordFailure(limits(), at(t0))
      expect(await counter().failures([client], t0 + windowMs)).toEqual([undefined])
      expect(await counter().recordFailure(limits(), at(t0 + windowMs))).toEqual({
        recorded: true,
      })
      expect(await counter().failures([client], t0 + windowMs)).toEqual([
        { count: 1, resetAt: t0 + 2 * windowMs },
      ])
    })

    it('counts at most the limit of many concurrent failures', async () => {
      expect(await recordConcurrently([counter()], 40, limits(20, 100), t0)).toBe(20)
      expect(await counter().failures([client, address], t0)).toEqual([
        { count: 20, resetAt: t0 + windowMs },
        { count: 20, resetAt: t0 + windowMs },
      ])
    })

    it('is purged once its window has ended', async () => {
      await counter().recordFailure(limits(), at(t0))
      await counter().recordFailure([{ key: 'client:live', limit: 3 }], at(t0 + 1))
      expect(await store().expiry.purgeExpired(t0 + windowMs)).toBe(2)
      expect(await store().expiry.purgeExpired(t0 + windowMs)).toBe(0)
      expect(await counter().failures(['client:live'], t0 + windowMs)).toEqual([
        { count: 1, resetAt: t0 + windowMs + 1 },
      ])
    })

    it('refuses malformed arguments with a TypeError', async () => {
      await expect(counter().failures([], t0)).rejects.toThrow(TypeError)
      await expect(counter().failures([client, client], t0)).rejects.toThrow(/distinct/)
      await expect(counter().failures([client], 1.5)).rejects.toThrow(TypeError)
      await expect(counter().recordFailure([{ key: client, limit: 0 }], at(t0))).rejects.toThrow(
        /limit/,
      )
      await expect(counter().recordFailure(limits(), { now: t0, windowMs: 0 })).rejects.toThrow(
        /windowMs/,
      )
      await expect(counter().recordFailure([{ key: '\ud800', limit: 1 }], at(t0))).rejects.toThrow(
        TypeError,
      )
    })
  })
}
