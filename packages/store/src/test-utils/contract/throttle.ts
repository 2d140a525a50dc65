import type { Reservation, ThrottleLimit } from '@tessera/grants'
import { describe, expect, it } from 'vitest'
import { attemptsHeld, clearOne, failOne, failuresOf, releaseOne, reserveOne } from './attempts.js'
import { freshStoreEach, hour, minute, t0, type OpenStore } from './fixtures.js'

/**
 * The ThrottleStore port: holds for attempts in flight, settled failures in fixed windows,
 * leases.
 */
export function throttleContract(open: OpenStore): void {
  describe('throttle', () => {
    const current = freshStoreEach(open)
    const windowMs = 15 * minute
    const at = (now: number, limit = 3) => ({ limit, now, windowMs })
    const lease = (now: number, leaseMs = hour) => ({ now, leaseMs })
    const granted = (reservation: Reservation): string => {
      if (reservation.status !== 'granted') throw new Error(`not granted: ${reservation.status}`)
      return reservation.hold
    }

    it('blocks once the window holds the limit of failures, until it ends', async () => {
      const store = current()
      for (let i = 0; i < 3; i++) {
        expect((await failOne(store, 'acme:alice', at(t0 + i * minute))).status).toBe('granted')
      }
      for (const now of [t0 + 3 * minute, t0 + windowMs - 1]) {
        expect(await reserveOne(store, 'acme:alice', { limit: 3, now })).toEqual({
          status: 'blocked',
          key: 'acme:alice',
          resetAt: t0 + windowMs,
        })
      }
      expect(await failuresOf(store, 'acme:alice', t0 + 4 * minute)).toBe(3)
      // The window ends: the next failure opens a new one, at count 1.
      const later = t0 + windowMs
      expect((await failOne(store, 'acme:alice', at(later))).status).toBe('granted')
      expect(await failuresOf(store, 'acme:alice', later)).toBe(1)
      expect(await reserveOne(store, 'acme:alice', { limit: 1, now: later })).toEqual({
        status: 'blocked',
        key: 'acme:alice',
        resetAt: later + windowMs,
      })
    })

    it('answers busy, never blocked, while holds in flight fill the limit', async () => {
      const store = current()
      const holds = []
      for (let i = 0; i < 3; i++) {
        holds.push(granted(await reserveOne(store, 'acme:alice', { limit: 3, now: t0 })))
      }
      expect(await reserveOne(store, 'acme:alice', { limit: 3, now: t0 })).toEqual({
        status: 'busy',
        key: 'acme:alice',
      })
      expect(await failuresOf(store, 'acme:alice', t0)).toBe(0)
      // One ends without a failure: room for one more.
      await releaseOne(store, holds[0] ?? '', t0)
      granted(await reserveOne(store, 'acme:alice', { limit: 3, now: t0 }))
      expect(await attemptsHeld(store, 'acme:alice', t0)).toBe(3)
    })

    it('counts failures and holds together: failures plus holds reach the limit, busy', async () => {
      const store = current()
      await failOne(store, 'acme:alice', at(t0))
      await failOne(store, 'acme:alice', at(t0))
      const hold = granted(await reserveOne(store, 'acme:alice', { limit: 3, now: t0 }))
      expect((await reserveOne(store, 'acme:alice', { limit: 3, now: t0 })).status).toBe('busy')
      // The hold turns into the third failure: blocked now.
      await store.throttle.settleAttempts(
        { hold, fail: ['acme:alice'], clear: [] },
        { now: t0 + minute, windowMs },
      )
      expect(await reserveOne(store, 'acme:alice', { limit: 3, now: t0 + minute })).toEqual({
        status: 'blocked',
        key: 'acme:alice',
        resetAt: t0 + windowMs,
      })
    })

    it('clears the failures of a key and keeps the holds in flight on it', async () => {
      const store = current()
      await failOne(store, 'acme:alice', at(t0))
      await failOne(store, 'acme:alice', at(t0))
      const other = granted(await reserveOne(store, 'acme:alice', { limit: 3, now: t0 }))
      const hold = granted(await reserveOne(store, 'ip:192.0.2.1', { limit: 3, now: t0 }))
      await failOne(store, 'ip:192.0.2.1', at(t0))
      await store.throttle.settleAttempts(
        { hold, fail: [], clear: ['acme:alice'] },
        { now: t0, windowMs },
      )
      expect(await failuresOf(store, 'acme:alice', t0)).toBe(0)
      expect(await attemptsHeld(store, 'acme:alice', t0)).toBe(1)
      expect(await attemptsHeld(store, 'ip:192.0.2.1', t0)).toBe(1)
      await releaseOne(store, other, t0)
      expect(await attemptsHeld(store, 'acme:alice', t0)).toBe(0)
      // Ending a hold twice, or one never granted, and clearing a key never seen, are nothing.
      await releaseOne(store, other, t0)
      await releaseOne(store, 'never-granted', t0)
      await clearOne(store, 'acme:never-seen', t0)
      expect(await failuresOf(store, 'ip:192.0.2.1', t0)).toBe(1)
    })

    it('stops counting a hold once its lease runs out, and still counts its failure', async () => {
      const store = current()
      const hold = granted(
        await store.throttle.reserveAttempts([{ key: 'acme:alice', limit: 1 }], lease(t0, minute)),
      )
      expect(
        (await store.throttle.reserveAttempts([{ key: 'acme:alice', limit: 1 }], lease(t0 + 1)))
          .status,
      ).toBe('busy')
      const late = t0 + minute
      const next = granted(
        await store.throttle.reserveAttempts([{ key: 'acme:alice', limit: 1 }], lease(late)),
      )
      // The first attempt's wrong password arrives after its lease: it counts all the same.
      await store.throttle.settleAttempts(
        { hold, fail: ['acme:alice'], clear: [] },
        { now: late, windowMs },
      )
      await releaseOne(store, next, late)
      expect(await failuresOf(store, 'acme:alice', late)).toBe(1)
      expect(await store.expiry.purgeExpired(late)).toBeGreaterThanOrEqual(0)
    })

    it('holds every key or none, and names the first blocked key before any busy one', async () => {
      const store = current()
      const alice = { key: 'acme:alice', limit: 3 }
      const address = { key: 'ip:192.0.2.1', limit: 2 }
      for (let i = 0; i < 3; i++) await failOne(store, 'acme:alice', at(t0))
      await failOne(store, 'ip:192.0.2.1', at(t0 + minute, 2))
      await failOne(store, 'ip:192.0.2.1', at(t0 + minute, 2))
      const now = lease(t0 + 2 * minute)
      expect(await store.throttle.reserveAttempts([alice, address], now)).toEqual({
        status: 'blocked',
        key: 'acme:alice',
        resetAt: t0 + windowMs,
      })
      expect(await store.throttle.reserveAttempts([address, alice], now)).toEqual({
        status: 'blocked',
        key: 'ip:192.0.2.1',
        resetAt: t0 + minute + windowMs,
      })
      // Bob's key busy, the address blocked: blocked wins, whatever the order.
      const bob = { key: 'acme:bob', limit: 1 }
      granted(await store.throttle.reserveAttempts([bob], now))
      expect(await store.throttle.reserveAttempts([bob, address], now)).toMatchObject({
        status: 'blocked',
        key: 'ip:192.0.2.1',
      })
      // Carol's key is free, the address busy: nothing is held on Carol's.
      const wide = { key: 'ip:192.0.2.9', limit: 1 }
      granted(await store.throttle.reserveAttempts([wide], now))
      const carol: ThrottleLimit = { key: 'acme:carol', limit: 1 }
      expect(await store.throttle.reserveAttempts([carol, wide], now)).toEqual({
        status: 'busy',
        key: 'ip:192.0.2.9',
      })
      expect(await attemptsHeld(store, 'acme:carol', now.now)).toBe(0)
    })

    it('grants exactly the limit minus the failures among concurrent reservations', async () => {
      const store = current()
      await failOne(store, 'acme:alice', at(t0, 7))
      await failOne(store, 'acme:alice', at(t0, 7))
      const results = await Promise.all(
        Array.from({ length: 25 }, () => reserveOne(store, 'acme:alice', { limit: 7, now: t0 })),
      )
      expect(results.filter((r) => r.status === 'granted')).toHaveLength(5)
      expect(results.filter((r) => r.status === 'busy')).toHaveLength(20)
      expect(await attemptsHeld(store, 'acme:alice', t0)).toBe(7)
    })

    it('holds nothing on the other keys of concurrent reservations a key refuses', async () => {
      const store = current()
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => {
          const user = { key: `acme:user-${i}`, limit: 1 }
          const address = { key: 'ip:192.0.2.1', limit: 5 }
          return store.throttle.reserveAttempts(
            i % 2 === 0 ? [user, address] : [address, user],
            lease(t0),
          )
        }),
      )
      expect(results.filter((r) => r.status === 'granted')).toHaveLength(5)
      expect(await attemptsHeld(store, 'ip:192.0.2.1', t0)).toBe(5)
      for (const [i, result] of results.entries()) {
        expect(await attemptsHeld(store, `acme:user-${i}`, t0)).toBe(
          result.status === 'granted' ? 1 : 0,
        )
      }
    })

    it('never lets more than the limit of concurrent wrong passwords through', async () => {
      const store = current()
      // 40 attempts, each one held then settled as a failure, all at once: 5 may be checked.
      let checked = 0
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, async () => {
          for (;;) {
            const reservation = await reserveOne(store, 'acme:alice', { limit: 5, now: t0 })
            if (reservation.status === 'blocked') return 'blocked'
            if (reservation.status === 'granted') {
              checked++
              await store.throttle.settleAttempts(
                { hold: reservation.hold, fail: ['acme:alice'], clear: [] },
                { now: t0, windowMs },
              )
              return 'failed'
            }
            await new Promise((resolve) => setTimeout(resolve, 5))
          }
        }),
      )
      expect(checked).toBe(5)
      expect(outcomes.filter((o) => o === 'blocked')).toHaveLength(35)
    })

    it('throws a TypeError for misuse of either method', async () => {
      const store = current()
      const terms = lease(t0)
      const window = { now: t0, windowMs }
      await expect(store.throttle.reserveAttempts([], terms)).rejects.toThrow(TypeError)
      const twice = [
        { key: 'acme:alice', limit: 3 },
        { key: 'acme:alice', limit: 5 },
      ]
      await expect(store.throttle.reserveAttempts(twice, terms)).rejects.toThrow(TypeError)
      await expect(
        store.throttle.reserveAttempts([{ key: 'acme:\uD800', limit: 3 }], terms),
      ).rejects.toThrow(TypeError)
      for (const bad of [
        { limit: 0, terms },
        { limit: 1.5, terms },
        { limit: 3, terms: lease(t0, 0) },
        { limit: 3, terms: lease(Number.NaN) },
      ]) {
        await expect(
          store.throttle.reserveAttempts([{ key: 'acme:alice', limit: bad.limit }], bad.terms),
        ).rejects.toThrow(TypeError)
      }
      for (const settlement of [
        { hold: 'h', fail: 'acme:alice', clear: [] },
        { hold: 'h', fail: ['acme:alice'], clear: ['acme:alice'] },
        { hold: 'h', fail: ['acme:alice', 'acme:alice'], clear: [] },
        { hold: 7, fail: [], clear: [] },
      ]) {
        await expect(store.throttle.settleAttempts(settlement as never, window)).rejects.toThrow(
          TypeError,
        )
      }
      await expect(
        store.throttle.settleAttempts({ hold: 'h', fail: [], clear: [] }, { now: t0, windowMs: 0 }),
      ).rejects.toThrow(TypeError)
      expect(await attemptsHeld(store, 'acme:alice', t0)).toBe(0)
    })
  })
}
