import { describe, expect, it } from 'vitest'
import { attemptsHeld, failOne, failuresOf, reserveOne } from './attempts.js'
import {
  codeRecord,
  day,
  freshStoreEach,
  hour,
  minute,
  refreshFamily,
  sha256,
  startFamily,
  t0,
  type OpenStore,
} from './fixtures.js'

/** The ExpiryStore port: purgeExpired across every table. */
export function purgeContract(open: OpenStore): void {
  describe('purgeExpired', () => {
    const store = freshStoreEach(open)

    it('deletes what can no longer matter, counts it, and leaves the rest', async () => {
      const now = t0 + 2 * day
      const windowMs = 15 * minute
      // Codes are kept an hour past expiry, so that a late replay is still seen as one.
      const purgedCode = codeRecord({ codeHash: sha256('old'), expiresAt: now - hour })
      const keptCode = codeRecord({ codeHash: sha256('late'), expiresAt: now - hour + 1 })
      await store().codes.saveCode(purgedCode)
      await store().codes.saveCode(keptCode)
      // startFamily saves codes of its own, live until t0 + 1 day: purged too.
      await startFamily(store(), refreshFamily({ familyId: 'old', expiresAt: now }), sha256('o1'))
      await store().refreshTokens.rotateRefreshToken('acme', sha256('o1'), sha256('o2'), t0)
      await startFamily(
        store(),
        refreshFamily({ familyId: 'live', expiresAt: now + 1 }),
        sha256('l1'),
      )
      await failOne(store(), 'acme:old', { limit: 5, now: now - windowMs, windowMs })
      await failOne(store(), 'acme:live', { limit: 5, now: now - windowMs + 1, windowMs })
      // A hold never settled, whose lease runs out at `now`.
      await reserveOne(store(), 'acme:stuck', { limit: 5, now: now - hour })

      // 3 codes, 2 tokens, 1 family, 1 window, 1 hold.
      expect(await store().expiry.purgeExpired(now)).toBe(8)
      expect(await store().expiry.purgeExpired(now)).toBe(0)

      expect(await store().codes.findCode('acme', purgedCode.codeHash)).toBeUndefined()
      expect(await store().codes.findCode('acme', keptCode.codeHash)).toStrictEqual(keptCode)
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('o1'))).toBeUndefined()
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('o2'))).toBeUndefined()
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('l1'))).toMatchObject({
        family: { familyId: 'live' },
      })
      expect(await attemptsHeld(store(), 'acme:old', now - 1)).toBe(0)
      expect(await failuresOf(store(), 'acme:live', now)).toBe(1)
    })

    it('deletes nothing from an empty store', async () => {
      expect(await store().expiry.purgeExpired(t0)).toBe(0)
    })
  })
}
