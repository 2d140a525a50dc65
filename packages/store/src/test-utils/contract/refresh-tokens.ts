import { beforeEach, describe, expect, it } from 'vitest'
import {
  freshStoreEach,
  hour,
  minute,
  refreshFamily,
  sha256,
  startFamily,
  storeError,
  t0,
  type OpenStore,
} from './fixtures.js'

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

    it('rotates a live token: the old one is spent, the new one is live in the same family', async () => {
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour),
      ).toStrictEqual({ status: 'rotated', family })
      expect(await store().refreshTokens.findRefreshToken('acme', first)).toMatchObject({
        token: { spentAt: t0 + hour },
      })
      expect(await store().refreshTokens.findRefreshToken('acme', second)).toStrictEqual({
        token: { tokenHash: second, familyId: family.familyId, createdAt: t0 + hour },
        family,
      })
      const third = sha256('rt-3')
      expect(
        (await store().refreshTokens.rotateRefreshToken('acme', second, third, t0 + 2 * hour))
          .status,
      ).toBe('rotated')
    })

    it('answers reused for a spent token and revokes the whole family', async () => {
      await store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour)
      expect(
        await store().refreshTokens.rotateRefreshToken(
          'acme',
          first,
          sha256('rt-x'),
          t0 + 2 * hour,
        ),
      ).toStrictEqual({ status: 'reused', family: { ...family, revokedAt: t0 + 2 * hour } })
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-x'))).toBeUndefined()
      // The live token dies with its family.
      expect(await store().refreshTokens.findRefreshToken('acme', second)).toMatchObject({
        token: { tokenHash: second },
        family: { revokedAt: t0 + 2 * hour },
      })
      expect(
        await store().refreshTokens.rotateRefreshToken(
          'acme',
          second,
          sha256('rt-y'),
          t0 + 3 * hour,
        ),
      ).toStrictEqual({ status: 'inactive', family: { ...family, revokedAt: t0 + 2 * hour } })
    })

    it('keeps answering reused for a spent token, with the time of the first revocation', async () => {
      await store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour)
      await store().refreshTokens.rotateRefreshToken('acme', first, sha256('a'), t0 + 2 * hour)
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', first, sha256('b'), t0 + 3 * hour),
      ).toStrictEqual({ status: 'reused', family: { ...family, revokedAt: t0 + 2 * hour } })
    })

    it('answers inactive for a live token of a revoked family and changes nothing', async () => {
      await store().refreshTokens.revokeFamily('acme', family.familyId, t0 + hour)
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + 2 * hour),
      ).toStrictEqual({ status: 'inactive', family: { ...family, revokedAt: t0 + hour } })
      expect(await store().refreshTokens.findRefreshToken('acme', first)).toMatchObject({
        token: { tokenHash: first },
      })
      expect(
        (await store().refreshTokens.findRefreshToken('acme', first))?.token,
      ).not.toHaveProperty('spentAt')
      expect(await store().refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
    })

    it('answers inactive once the family has expired, spent token or not, and changes nothing', async () => {
      await store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour)
      for (const presented of [first, second]) {
        expect(
          await store().refreshTokens.rotateRefreshToken(
            'acme',
            presented,
            sha256('rt-x'),
            family.expiresAt,
          ),
        ).toStrictEqual({ status: 'inactive', family })
      }
      expect(
        (await store().refreshTokens.findRefreshToken('acme', second))?.token,
      ).not.toHaveProperty('spentAt')
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-x'))).toBeUndefined()
    })

    it('answers not_found for an unknown token', async () => {
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', sha256('nope'), second, t0),
      ).toEqual({ status: 'not_found' })
      expect(await store().refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
    })

    it('lets one of 20 concurrent rotations of a token win; the rest revoke the family', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store().refreshTokens.rotateRefreshToken('acme', first, sha256(`next-${i}`), t0 + hour),
        ),
      )
      const statuses = results.map((result) => result.status)
      expect(statuses.filter((status) => status === 'rotated')).toHaveLength(1)
      expect(statuses.filter((status) => status === 'reused')).toHaveLength(19)
      const found = await Promise.all(
        results.map((_, i) => store().refreshTokens.findRefreshToken('acme', sha256(`next-${i}`))),
      )
      expect(found.filter((f) => f !== undefined)).toHaveLength(1)
      expect(found[statuses.indexOf('rotated')]?.family.revokedAt).toBe(t0 + hour)
    })

    it('refuses a new hash that is already a token, and changes nothing', async () => {
      await startFamily(store(), refreshFamily({ familyId: 'family-2' }), second)
      const error = await storeError(
        store().refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour),
      )
      expect(error.code).toBe('ERR_STORE_CONFLICT')
      expect(
        (await store().refreshTokens.findRefreshToken('acme', first))?.token,
      ).not.toHaveProperty('spentAt')
      expect(await store().refreshTokens.findRefreshToken('acme', second)).toMatchObject({
        family: { familyId: 'family-2' },
      })
    })

    it('finds a family by id in any state, and nothing for an unknown id or tenant (#11)', async () => {
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
  })
}
