import type { AuthorizationCodeRecord, SessionRecord } from '@tessera/grants'
import { describe, expect, it } from 'vitest'
import {
  codeRecord,
  day,
  freshStoreEach,
  hour,
  minute,
  refreshFamily,
  sessionRecord,
  sha256,
  startFamily,
  storeError,
  t0,
  type OpenStore,
} from './fixtures.js'
import { raceLogoutAndRedemption } from './races.js'

/** The SessionStore port: sign-in sessions, and a logout that ends its sid everywhere. */
export function sessionsContract(open: OpenStore): void {
  describe('sessions', () => {
    const store = freshStoreEach(open)

    it('creates a session and finds it by (tenant, idHash) with every field intact', async () => {
      const session = sessionRecord()
      await store().sessions.createSession(session)
      expect(await store().sessions.findSession('acme', session.idHash)).toStrictEqual(session)
      expect(await store().sessions.findSession('acme', sha256('session-2'))).toBeUndefined()
      expect(await store().sessions.findSession('globex', session.idHash)).toBeUndefined()
      const found = await store().sessions.findSession('acme', session.idHash)
      expect(found).not.toHaveProperty('endedAt')
      // Copies: changing what was given or found changes nothing stored.
      session.claims.email = 'mallory@example.com'
      if (found) (found.claims.roles as string[]).push('root')
      expect((await store().sessions.findSession('acme', session.idHash))?.claims).toStrictEqual(
        sessionRecord().claims,
      )
    })

    it('keeps the sessions of two tenants apart, with the same idHash', async () => {
      await store().sessions.createSession(sessionRecord())
      await store().sessions.createSession(sessionRecord({ tenant: 'globex', sub: 'bob' }))
      expect((await store().sessions.findSession('globex', sha256('session-1')))?.sub).toBe('bob')
      expect(await store().sessions.endSession('globex', 'sid-1', t0 + minute)).toBe(true)
      expect(await store().sessions.findSession('acme', sha256('session-1'))).toStrictEqual(
        sessionRecord(),
      )
    })

    it('refuses a second session with one idHash with ERR_STORE_CONFLICT, changing nothing', async () => {
      const old = sessionRecord({ idHash: sha256('old') })
      await store().sessions.createSession(old)
      await store().sessions.createSession(sessionRecord())
      const error = await storeError(
        store().sessions.createSession(
          sessionRecord({ sub: 'mallory', createdAt: t0 + minute }),
          old.idHash,
        ),
      )
      expect(error.code).toBe('ERR_STORE_CONFLICT')
      expect(error.message).not.toContain(sha256('session-1'))
      expect(await store().sessions.findSession('acme', sha256('session-1'))).toStrictEqual(
        sessionRecord(),
      )
      // The session it named as replaced is left live: all or nothing.
      expect(await store().sessions.findSession('acme', old.idHash)).toStrictEqual(old)
    })

    it('ends the session it replaces at the new one’s createdAt, in the same call', async () => {
      const first = sessionRecord({ idHash: sha256('first') })
      await store().sessions.createSession(first)
      const second = sessionRecord({ idHash: sha256('second'), createdAt: t0 + hour })
      await store().sessions.createSession(second, first.idHash)
      expect(await store().sessions.findSession('acme', first.idHash)).toStrictEqual({
        ...first,
        endedAt: t0 + hour,
      })
      expect(await store().sessions.findSession('acme', second.idHash)).toStrictEqual(second)
      // An ended session keeps the time it first ended.
      const third = sessionRecord({ idHash: sha256('third'), createdAt: t0 + 2 * hour })
      await store().sessions.createSession(third, first.idHash)
      expect((await store().sessions.findSession('acme', first.idHash))?.endedAt).toBe(t0 + hour)
      // Replacing an unknown session, or one of another tenant, ends nothing.
      await store().sessions.createSession(sessionRecord({ tenant: 'globex' }))
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('fourth'), createdAt: t0 + 3 * hour }),
        sha256('session-1'),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('fifth'), createdAt: t0 + 3 * hour }),
        sha256('no-such-session'),
      )
      expect(await store().sessions.findSession('globex', sha256('session-1'))).not.toHaveProperty(
        'endedAt',
      )
      expect(await store().sessions.findSession('acme', second.idHash)).toStrictEqual(second)
    })

    it('ends every session of the sid, consumes its codes and revokes its families', async () => {
      const sid = 'sid-1'
      const other = 'sid-2'
      await store().sessions.createSession(sessionRecord({ idHash: sha256('a'), sid }))
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('b'), sid, createdAt: t0 + minute }),
      )
      await store().sessions.createSession(sessionRecord({ idHash: sha256('c'), sid: other }))
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('d'), sid, endedAt: t0 + minute }),
      )
      await store().sessions.createSession(sessionRecord({ tenant: 'globex', sid }))
      // Codes: one live, one redeemed, one expired, one of another sid, one without a sid.
      const live = codeRecord({ codeHash: sha256('live'), sid })
      const redeemed = codeRecord({ codeHash: sha256('redeemed'), sid })
      const expired = codeRecord({ codeHash: sha256('expired'), sid, expiresAt: t0 + minute })
      const otherCode = codeRecord({ codeHash: sha256('other'), sid: other })
      const plain = codeRecord({ codeHash: sha256('plain') })
      const globexCode = codeRecord({ tenant: 'globex', codeHash: sha256('live'), sid })
      for (const code of [live, redeemed, expired, otherCode, plain, globexCode]) {
        await store().codes.saveCode(code)
      }
      const family = refreshFamily({ codeHash: redeemed.codeHash, sid, authTime: t0 })
      await store().codes.redeemCode('acme', redeemed.codeHash, t0 + minute, {
        family,
        tokenHash: sha256('rt-1'),
      })
      await startFamily(store(), refreshFamily({ familyId: 'revoked', sid }), sha256('rt-r'))
      await store().refreshTokens.revokeFamily('acme', 'revoked', t0 + minute)
      await startFamily(store(), refreshFamily({ familyId: 'other', sid: other }), sha256('rt-o'))
      await startFamily(store(), refreshFamily({ familyId: 'plain' }), sha256('rt-p'))
      await startFamily(
        store(),
        refreshFamily({ tenant: 'globex', familyId: 'globex', sid }),
        sha256('rt-g'),
      )

      const now = t0 + 2 * hour
      expect(await store().sessions.endSession('acme', sid, now)).toBe(true)

      const session = (tenant: string, name: string): Promise<SessionRecord | undefined> =>
        store().sessions.findSession(tenant, sha256(name))
      expect((await session('acme', 'a'))?.endedAt).toBe(now)
      expect((await session('acme', 'b'))?.endedAt).toBe(now)
      expect((await session('acme', 'd'))?.endedAt).toBe(t0 + minute)
      expect(await session('acme', 'c')).not.toHaveProperty('endedAt')
      expect(await session('globex', 'session-1')).not.toHaveProperty('endedAt')

      const consumedAt = async (tenant: string, code: AuthorizationCodeRecord) =>
        (await store().codes.findCode(tenant, code.codeHash))?.consumedAt
      expect(await consumedAt('acme', live)).toBe(now)
      expect(await consumedAt('acme', redeemed)).toBe(t0 + minute)
      expect(await consumedAt('acme', expired)).toBe(now)
      expect(await consumedAt('acme', otherCode)).toBeUndefined()
      expect(await consumedAt('acme', plain)).toBeUndefined()
      expect(await consumedAt('globex', globexCode)).toBeUndefined()
      // A code of the sid cannot start a family afterwards.
      expect(
        await store().codes.redeemCode('acme', live.codeHash, now, {
          family: refreshFamily({ familyId: 'late', sid }),
        }),
      ).toBe(false)
      expect(await store().refreshTokens.findFamily('acme', 'late')).toBeUndefined()

      const revokedAt = async (tenant: string, familyId: string) =>
        (await store().refreshTokens.findFamily(tenant, familyId))?.revokedAt
      expect(await revokedAt('acme', family.familyId)).toBe(now)
      expect(await revokedAt('acme', 'revoked')).toBe(t0 + minute)
      expect(await revokedAt('acme', 'other')).toBeUndefined()
      expect(await revokedAt('acme', 'plain')).toBeUndefined()
      expect(await revokedAt('globex', 'globex')).toBeUndefined()
      expect(
        (await store().refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('n'), now))
          .status,
      ).toBe('inactive')
    })

    it('answers whether a session live at now was ended', async () => {
      const expiresAt = t0 + hour
      await store().sessions.createSession(sessionRecord({ sid: 'live', expiresAt }))
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('expired'), sid: 'expired', expiresAt }),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('ended'), sid: 'ended', endedAt: t0 + minute }),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('old'), sid: 'mixed', expiresAt }),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('new'), sid: 'mixed', expiresAt: expiresAt + 1 }),
      )
      // Live up to the millisecond before it expires.
      expect(await store().sessions.endSession('acme', 'live', expiresAt - 1)).toBe(true)
      expect(await store().sessions.endSession('acme', 'live', expiresAt - 1)).toBe(false)
      // An expired session is ended all the same, but was not live.
      expect(await store().sessions.endSession('acme', 'expired', expiresAt)).toBe(false)
      expect((await store().sessions.findSession('acme', sha256('expired')))?.endedAt).toBe(
        expiresAt,
      )
      expect(await store().sessions.endSession('acme', 'ended', t0 + hour)).toBe(false)
      expect((await store().sessions.findSession('acme', sha256('ended')))?.endedAt).toBe(
        t0 + minute,
      )
      expect(await store().sessions.endSession('acme', 'unknown', t0)).toBe(false)
      expect(await store().sessions.endSession('globex', 'live', t0)).toBe(false)
      // One live session among expired ones is enough.
      expect(await store().sessions.endSession('acme', 'mixed', expiresAt)).toBe(true)
    })

    it('never leaves a live family of a sid whose logout raced its code’s redemption', async () => {
      await raceLogoutAndRedemption(store(), store(), 20)
    })

    it('throws a TypeError for a malformed session or argument, storing nothing', async () => {
      for (const [fields, replaces] of [
        [{ idHash: 'x\ud800' }, undefined],
        [{ sid: 1 as unknown as string }, undefined],
        [{ claims: [] as unknown as Record<string, unknown> }, undefined],
        [{ authTime: Number.NaN }, undefined],
        [{ expiresAt: t0 + 0.5 }, undefined],
        [{ endedAt: Number.POSITIVE_INFINITY }, undefined],
        [{}, 'x\udc00'],
      ] as const) {
        await expect(
          store().sessions.createSession(sessionRecord(fields), replaces),
        ).rejects.toThrow(TypeError)
      }
      expect(await store().sessions.findSession('acme', sha256('session-1'))).toBeUndefined()
      await store().sessions.createSession(sessionRecord())
      await expect(store().sessions.endSession('acme', 'sid-1', t0 + 0.5)).rejects.toThrow(
        TypeError,
      )
      await expect(store().sessions.endSession('acme', 'x\ud800', t0)).rejects.toThrow(TypeError)
      expect(await store().sessions.findSession('acme', sha256('session-1'))).toStrictEqual(
        sessionRecord(),
      )
    })

    it('is purged once expired or ended, and counted', async () => {
      const now = t0 + day
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('expired'), expiresAt: now }),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('live'), expiresAt: now + 1 }),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('ended'), expiresAt: now + day, endedAt: now }),
      )
      await store().sessions.createSession(
        sessionRecord({ idHash: sha256('ends-later'), expiresAt: now + day, endedAt: now + 1 }),
      )
      expect(await store().expiry.purgeExpired(now)).toBe(2)
      expect(await store().expiry.purgeExpired(now)).toBe(0)
      expect(await store().sessions.findSession('acme', sha256('expired'))).toBeUndefined()
      expect(await store().sessions.findSession('acme', sha256('ended'))).toBeUndefined()
      expect(await store().sessions.findSession('acme', sha256('live'))).toBeDefined()
      expect(await store().sessions.findSession('acme', sha256('ends-later'))).toBeDefined()
    })
  })
}
