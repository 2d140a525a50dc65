import { describe, expect, it } from 'vitest'
import type { Store } from '../../store.js'
import { attemptsHeld, failOne, failuresOf, reserveOne } from './attempts.js'
import { codeRecord, refreshFamily, sha256, startFamily, storedKey, t0 } from './fixtures.js'
import { raceLogoutAndRedemption, recordConcurrently } from './races.js'
import type { SharedDatabase } from './shared-database.js'

/**
 * Several stores of one process on one database, each with its own connections, as replicas:
 * what one writes the others see, and a race between them has one winner.
 */
export function storesContract(database: SharedDatabase): void {
  describe('stores on one database, as replicas', () => {
    /** Four stores on a fresh database, and that database's URL. */
    async function replicas(): Promise<{ stores: Store[]; url: string }> {
      const url = await database.fresh()
      const stores = await Promise.all(Array.from({ length: 4 }, () => database.open(url)))
      return { stores, url }
    }

    /** The replica that serves request `i`: round robin. */
    function nth(stores: Store[], i: number): Store {
      const store = stores[i % stores.length]
      if (store === undefined) throw new Error('no replicas')
      return store
    }

    it('see each other’s writes', async () => {
      const { stores } = await replicas()
      const [a, b] = [nth(stores, 0), nth(stores, 1)]
      await a.keys.insertKeyIfAbsent(storedKey())
      expect(await b.keys.listKeys('acme')).toEqual([storedKey()])
      await b.keys.updateKeyState('acme', '2025-03-10', 'retired', 5)
      expect(await a.keys.listKeys('acme')).toMatchObject([{ state: 'retired', retiredAt: 5 }])
      const window = { limit: 2, now: 0, windowMs: 60_000 }
      await failOne(a, 'acme:alice', window)
      expect((await reserveOne(b, 'acme:alice', window)).status).toBe('granted')
      expect((await reserveOne(a, 'acme:alice', window)).status).toBe('busy')
    })

    it('count at most the limit of 60 concurrent client-auth failures between them', async () => {
      const { stores, url } = await replicas()
      const counters = stores.map((store) => store.clientAuthFailures)
      const keys = [
        { key: 'client:x', limit: 20 },
        { key: 'addr:x', limit: 100 },
      ]
      expect(await recordConcurrently(counters, 60, keys, t0)).toBe(20)
      expect(await counters[1]?.failures(['addr:x'], t0)).toEqual([
        { count: 20, resetAt: t0 + 15 * 60_000 },
      ])
      expect(await database.count(url, 'client_auth_failures WHERE count = 20')).toBe(2)
    })

    it('let exactly one of 20 redemptions of a code, spread over them, win and create its family', async () => {
      const { stores, url } = await replicas()
      await nth(stores, 0).codes.saveCode(codeRecord())
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          nth(stores, i).codes.redeemCode('acme', sha256('code-1'), t0, {
            family: refreshFamily({ familyId: `family-${i}` }),
            tokenHash: sha256(`rt-${i}`),
          }),
        ),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await database.count(url, 'refresh_families')).toBe(1)
      expect(await database.count(url, 'refresh_tokens')).toBe(1)
      const winner = `family-${results.indexOf(true)}`
      expect(await nth(stores, 1).refreshTokens.findFamily('acme', winner)).toBeDefined()
      expect(await nth(stores, 1).codes.findCode('acme', sha256('code-1'))).toMatchObject({
        consumedAt: t0,
      })
    })

    it('let exactly one of 20 rotations of a token, spread over them, win; the family ends revoked', async () => {
      const { stores, url } = await replicas()
      await startFamily(nth(stores, 0), refreshFamily(), sha256('rt-1'))
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          nth(stores, i + 1).refreshTokens.rotateRefreshToken(
            'acme',
            sha256('rt-1'),
            sha256(`next-${i}`),
            t0 + 1,
          ),
        ),
      )
      const statuses = results.map((result) => result.status)
      expect(statuses.filter((status) => status === 'rotated')).toHaveLength(1)
      expect(statuses.filter((status) => status === 'reused')).toHaveLength(19)
      // Every reuse saw the family as revoked at the time of the first one.
      for (const result of results) {
        if (result.status === 'reused') expect(result.family.revokedAt).toBe(t0 + 1)
      }
      expect(await database.count(url, 'refresh_tokens')).toBe(2)
      expect(await database.count(url, `refresh_families WHERE revoked_at = ${t0 + 1}`)).toBe(1)
      for (const store of stores) {
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('rt-1'))).toMatchObject({
          token: { spentAt: t0 + 1 },
          family: { revokedAt: t0 + 1 },
        })
      }
    })

    it('let exactly one of them insert the same (tenant, kid)', async () => {
      const { stores } = await replicas()
      const results = await Promise.all(
        stores.map((store, i) =>
          store.keys.insertKeyIfAbsent(storedKey({ publicJwk: JSON.stringify({ from: i }) })),
        ),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      const winner = JSON.stringify({ from: results.indexOf(true) })
      for (const store of stores) {
        expect(await store.keys.listKeys('acme')).toMatchObject([{ publicJwk: winner }])
      }
    })

    it('never leave a live family of an ended sid: logouts on one racing redemptions on another', async () => {
      const { stores, url } = await replicas()
      await raceLogoutAndRedemption(nth(stores, 0), nth(stores, 1), 200)
      expect(
        await database.count(
          url,
          `refresh_families AS f WHERE f.revoked_at IS NULL AND EXISTS
            (SELECT 1 FROM sessions AS s WHERE s.tenant = f.tenant AND s.sid = f.sid
              AND s.ended_at IS NOT NULL)`,
        ),
      ).toBe(0)
    })
    it('let exactly one of 20 rotations for the client win; another client’s attempts change nothing', async () => {
      const { stores, url } = await replicas()
      await startFamily(nth(stores, 0), refreshFamily(), sha256('rt-1'))
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          nth(stores, i).refreshTokens.rotateRefreshTokenForClient(
            'acme',
            i % 4 === 3 ? 'other-client' : 'web',
            sha256('rt-1'),
            sha256(`next-${i}`),
            t0 + 1,
          ),
        ),
      )
      const statuses = results.map((result) => result.status)
      expect(statuses.filter((status) => status === 'not_found')).toHaveLength(5)
      expect(statuses.filter((status) => status === 'rotated')).toHaveLength(1)
      expect(statuses.filter((status) => status === 'reused')).toHaveLength(14)
      expect(statuses.indexOf('rotated') % 4).not.toBe(3)
      expect(await database.count(url, 'refresh_tokens')).toBe(2)
      expect(await database.count(url, `refresh_families WHERE revoked_at = ${t0 + 1}`)).toBe(1)
    })

    it('grant exactly the limit among 40 concurrent reservations', async () => {
      const { stores } = await replicas()
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          reserveOne(nth(stores, i), 'user:acme:alice', { limit: 9, now: t0 }),
        ),
      )
      expect(results.filter((r) => r.status === 'granted')).toHaveLength(9)
      expect(results.filter((r) => r.status === 'busy')).toHaveLength(31)
      expect(await attemptsHeld(nth(stores, 0), 'user:acme:alice', t0)).toBe(9)
    })

    it('reserve and settle two keys at once, in either order, without deadlock', async () => {
      const { stores } = await replicas()
      const window = { now: t0, windowMs: 60_000 }
      const user = (i: number) => ({ key: `user:acme:u${i % 4}`, limit: 6 })
      const address = { key: 'addr:192.0.2.1', limit: 20 }
      // Half ask user then address, half the other way round; every fourth granted one is settled
      // as a success (clear the user), the others as failures, while the rest still reserve.
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const store = nth(stores, i)
          const keys = i % 2 === 0 ? [user(i), address] : [address, user(i)]
          const reservation = await store.throttle.reserveAttempts(keys, {
            now: t0,
            leaseMs: 60_000,
          })
          if (reservation.status !== 'granted') return 'refused'
          const success = i % 4 === 1
          await store.throttle.settleAttempts(
            {
              hold: reservation.hold,
              fail: success ? [] : [user(i).key, address.key],
              clear: success ? [user(i).key] : [],
            },
            window,
          )
          return success ? 'signed-in' : 'failed'
        }),
      )
      const failed = outcomes.filter((o) => o === 'failed').length
      // The address holds the failures only, and no hold is left.
      expect(await failuresOf(nth(stores, 0), address.key, t0)).toBe(failed)
      expect(await attemptsHeld(nth(stores, 0), address.key, t0)).toBe(failed)
      expect(failed).toBeLessThanOrEqual(20)
      for (const u of [0, 2, 3]) {
        expect(await failuresOf(nth(stores, 0), `user:acme:u${u}`, t0)).toBeLessThanOrEqual(6)
      }
    })

    it('let exactly one of 20 marks of one id, spread over them, set it', async () => {
      const { stores } = await replicas()
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          nth(stores, i).marks.mark('acme', 'jti', 'race', t0 + 60_000, t0),
        ),
      )
      expect(answers.filter(Boolean)).toHaveLength(1)
    })

    it('purge at once without deleting anything twice', async () => {
      const { stores } = await replicas()
      for (let i = 0; i < 10; i++) {
        await nth(stores, 0).codes.saveCode(
          codeRecord({ codeHash: sha256(`old-${i}`), expiresAt: t0 }),
        )
      }
      const deleted = await Promise.all(
        stores.map((store) => store.expiry.purgeExpired(t0 + 2 * 60 * 60 * 1000)),
      )
      expect(deleted.reduce((a, b) => a + b, 0)).toBe(10)
    })
  })
}
