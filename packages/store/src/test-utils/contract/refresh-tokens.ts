import { beforeEach, describe, expect, it } from 'vitest'
import {
  freshStoreEach,
  hour,
  minute,
  refreshFamily,
  sha256,
  startFamily,
  t0,
  type OpenStore,
} from './fixtures.js'
import { rotateForClientTests } from './rotate-for-client.js'
import { rotationTests } from './rotation.js'

/** The RefreshTokenStore port: rotation, reuse detection, revocation. */
export function refreshTokensContract(open: OpenStore): void {
  describe('refresh tokens', () => {
    const store = freshStoreEach(open)

    const family = refreshFamily()
    const first = sha256('rt-1')
    const second = sha256('rt-2')

    beforeEach(async () => {
      await startFamily(store(), family, first)
    })

    it('finds a token with its family, and nothing for an unknown hash', async () => {
      expect(await store().refreshTokens.findRefreshToken('acme', first)).toStrictEqual({
        token: { tokenHash: first, familyId: family.familyId, createdAt: t0 },
        family,
      })
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('nope'))).toBeUndefined()
    })

    rotationTests(store, (...args) => store().refreshTokens.rotateRefreshToken(...args))

    it('finds a family by id in any state, and nothing for an unknown id or tenant', async () => {
      expect(await store().refreshTokens.findFamily('acme', family.familyId)).toStrictEqual(family)
      expect(await store().refreshTokens.findFamily('acme', 'no-such-family')).toBeUndefined()
      expect(await store().refreshTokens.findFamily('globex', family.familyId)).toBeUndefined()
      await store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + minute)
      await store().refreshTokens.rotateRefreshToken('acme', first, sha256('rt-3'), t0 + hour)
      expect(await store().refreshTokens.findFamily('acme', family.familyId)).toStrictEqual({
        ...family,
        revokedAt: t0 + hour,
      })
      const found = await store().refreshTokens.findFamily('acme', family.familyId)
      if (found) found.claims.email = 'mallory@example.com'
      expect(
        (await store().refreshTokens.findFamily('acme', family.familyId))?.claims,
      ).toStrictEqual(family.claims)
    })

    it('revokes one family, keeping the time of its first revocation', async () => {
      await startFamily(store(), refreshFamily({ familyId: 'family-2' }), second)
      await store().refreshTokens.revokeFamily('acme', family.familyId, t0 + hour)
      await store().refreshTokens.revokeFamily('acme', family.familyId, t0 + 2 * hour)
      await store().refreshTokens.revokeFamily('acme', 'no-such-family', t0 + hour)
      expect((await store().refreshTokens.findRefreshToken('acme', first))?.family.revokedAt).toBe(
        t0 + hour,
      )
      expect(
        (await store().refreshTokens.findRefreshToken('acme', second))?.family,
      ).not.toHaveProperty('revokedAt')
    })

    it('revokes every family issued from one code, and only those', async () => {
      const replayed = family.codeHash
      await startFamily(store(), refreshFamily({ familyId: 'same-code' }), sha256('rt-same'))
      await startFamily(
        store(),
        refreshFamily({ familyId: 'other-code', codeHash: sha256('code-2') }),
        sha256('rt-other'),
      )
      await startFamily(
        store(),
        refreshFamily({ familyId: 'no-code', codeHash: undefined }),
        sha256('rt-none'),
      )
      await store().refreshTokens.revokeFamily('acme', 'same-code', t0 + hour)
      await store().refreshTokens.revokeFamiliesByCode('acme', replayed ?? '', t0 + 2 * hour)
      const revokedAt = async (tokenHash: string): Promise<number | undefined> =>
        (await store().refreshTokens.findRefreshToken('acme', tokenHash))?.family.revokedAt
      expect(await revokedAt(first)).toBe(t0 + 2 * hour)
      expect(await revokedAt(sha256('rt-same'))).toBe(t0 + hour)
      expect(await revokedAt(sha256('rt-other'))).toBeUndefined()
      expect(await revokedAt(sha256('rt-none'))).toBeUndefined()
      expect(
        (await store().refreshTokens.findRefreshToken('acme', sha256('rt-none')))?.family,
      ).not.toHaveProperty('codeHash')
    })

    describe('rotateRefreshTokenForClient, for the family’s client', () => {
      rotationTests(store, (tenant, oldHash, newHash, now) =>
        store().refreshTokens.rotateRefreshTokenForClient(
          tenant,
          family.clientId,
          oldHash,
          newHash,
          now,
        ),
      )
      rotateForClientTests(store)
    })
  })
}
