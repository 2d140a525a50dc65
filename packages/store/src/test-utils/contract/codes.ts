import { describe, expect, it } from 'vitest'
import {
  codeRecord,
  freshStoreEach,
  minute,
  refreshFamily,
  sha256,
  startFamily,
  storeError,
  t0,
  type OpenStore,
} from './fixtures.js'

/** The AuthorizationCodeStore port: a code saved once, redeemed once, starting its family in the same step. */
export function codesContract(open: OpenStore): void {
  describe('authorization codes', () => {
    const store = freshStoreEach(open)

    it('saves a code and finds it by (tenant, hash) with every field intact', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual(code)
      expect(await store().codes.findCode('acme', sha256('code-2'))).toBeUndefined()
    })

    it('leaves absent optional fields out, even when given as undefined', async () => {
      const code = codeRecord({ codeChallenge: undefined, consumedAt: undefined, claims: {} })
      await store().codes.saveCode(code)
      const found = await store().codes.findCode('acme', code.codeHash)
      expect(found).not.toHaveProperty('codeChallenge')
      expect(found).not.toHaveProperty('consumedAt')
      expect(found?.claims).toStrictEqual({})
    })

    it('redeems a code once: true, then false', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      expect(await store().codes.redeemCode('acme', code.codeHash, t0 + minute, undefined)).toBe(
        true,
      )
      expect(await store().codes.redeemCode('acme', code.codeHash, t0 + minute, undefined)).toBe(
        false,
      )
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual({
        ...code,
        consumedAt: t0 + minute,
      })
    })

    it('redeems a code up to the millisecond before it expires, and never after', async () => {
      const live = codeRecord({ codeHash: sha256('live') })
      const expired = codeRecord({ codeHash: sha256('expired') })
      await store().codes.saveCode(live)
      await store().codes.saveCode(expired)
      expect(
        await store().codes.redeemCode('acme', live.codeHash, live.expiresAt - 1, undefined),
      ).toBe(true)
      expect(
        await store().codes.redeemCode('acme', expired.codeHash, expired.expiresAt, undefined),
      ).toBe(false)
      // An expired code is refused, not consumed: it is not mistaken for a replay later.
      expect(await store().codes.findCode('acme', expired.codeHash)).not.toHaveProperty(
        'consumedAt',
      )
    })

    it('does not redeem an unknown code', async () => {
      expect(await store().codes.redeemCode('acme', sha256('nope'), t0, undefined)).toBe(false)
    })

    it('creates the family and its first token exactly when the redemption is given one', async () => {
      const withIssue = codeRecord({ codeHash: sha256('with') })
      const without = codeRecord({ codeHash: sha256('without') })
      await store().codes.saveCode(withIssue)
      await store().codes.saveCode(without)
      const family = refreshFamily({ codeHash: withIssue.codeHash })
      expect(
        await store().codes.redeemCode('acme', withIssue.codeHash, t0 + minute, {
          family,
          tokenHash: sha256('rt-1'),
        }),
      ).toBe(true)
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-1'))).toStrictEqual({
        token: { tokenHash: sha256('rt-1'), familyId: family.familyId, createdAt: t0 + minute },
        family,
      })

      expect(await store().codes.redeemCode('acme', without.codeHash, t0 + minute, undefined)).toBe(
        true,
      )
      // A redemption that loses creates nothing, whatever it was given.
      const late = refreshFamily({ familyId: 'family-late', codeHash: withIssue.codeHash })
      expect(
        await store().codes.redeemCode('acme', withIssue.codeHash, t0 + minute, {
          family: late,
          tokenHash: sha256('rt-late'),
        }),
      ).toBe(false)
      expect(
        await store().refreshTokens.findRefreshToken('acme', sha256('rt-late')),
      ).toBeUndefined()
      await store().refreshTokens.revokeFamiliesByCode('acme', withIssue.codeHash, t0 + 2 * minute)
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-1'))).toMatchObject({
        family: { familyId: family.familyId, revokedAt: t0 + 2 * minute },
      })
    })

    it('creates a family without a token when the redemption gives none', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      const family = refreshFamily({ familyId: 'no-token', codeHash: code.codeHash })
      expect(await store().codes.redeemCode('acme', code.codeHash, t0, { family })).toBe(true)
      expect(await store().refreshTokens.findFamily('acme', 'no-token')).toStrictEqual(family)
      // A replay of the code revokes it like any other family of the code.
      await store().refreshTokens.revokeFamiliesByCode('acme', code.codeHash, t0 + minute)
      expect(await store().refreshTokens.findFamily('acme', 'no-token')).toStrictEqual({
        ...family,
        revokedAt: t0 + minute,
      })
      // A second redemption loses and creates nothing, with or without a token.
      const late = refreshFamily({ familyId: 'late', codeHash: code.codeHash })
      expect(await store().codes.redeemCode('acme', code.codeHash, t0, { family: late })).toBe(
        false,
      )
      expect(await store().refreshTokens.findFamily('acme', 'late')).toBeUndefined()
    })

    it('lets exactly one of 20 concurrent redemptions win, and creates one family', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store().codes.redeemCode('acme', code.codeHash, t0 + minute, {
            family: refreshFamily({ familyId: `family-${i}` }),
            tokenHash: sha256(`rt-${i}`),
          }),
        ),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      const found = await Promise.all(
        results.map((_, i) => store().refreshTokens.findRefreshToken('acme', sha256(`rt-${i}`))),
      )
      const winner = results.indexOf(true)
      expect(found.filter((f) => f !== undefined)).toHaveLength(1)
      expect(found[winner]?.family.familyId).toBe(`family-${winner}`)
    })

    it('consumes nothing when the family cannot be created', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      await startFamily(store(), refreshFamily({ familyId: 'taken' }), sha256('rt-taken'))
      for (const issue of [
        { family: refreshFamily({ familyId: 'taken' }), tokenHash: sha256('rt-new') },
        { family: refreshFamily({ familyId: 'new' }), tokenHash: sha256('rt-taken') },
      ]) {
        const error = await storeError(store().codes.redeemCode('acme', code.codeHash, t0, issue))
        expect(error.code).toBe('ERR_STORE_CONFLICT')
      }
      expect(await store().codes.findCode('acme', code.codeHash)).not.toHaveProperty('consumedAt')
      expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-new'))).toBeUndefined()
      expect(
        await store().codes.redeemCode('acme', code.codeHash, t0, {
          family: refreshFamily({ familyId: 'new' }),
          tokenHash: sha256('rt-new'),
        }),
      ).toBe(true)
    })

    it('refuses a second save of one code with ERR_STORE_CONFLICT and keeps the first', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      const error = await storeError(store().codes.saveCode(codeRecord({ sub: 'mallory' })))
      expect(error.code).toBe('ERR_STORE_CONFLICT')
      expect(error.message).not.toContain(code.codeHash)
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual(code)
    })

    it('throws a TypeError for a family of another tenant or a time that is not an integer', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      const foreign = { family: refreshFamily({ tenant: 'globex' }), tokenHash: sha256('rt') }
      await expect(store().codes.redeemCode('acme', code.codeHash, t0, foreign)).rejects.toThrow(
        TypeError,
      )
      await expect(
        store().codes.redeemCode('acme', code.codeHash, t0 + 0.5, undefined),
      ).rejects.toThrow(TypeError)
      await expect(
        store().codes.saveCode(codeRecord({ codeHash: sha256('nan'), expiresAt: Number.NaN })),
      ).rejects.toThrow(TypeError)
      expect(await store().codes.findCode('acme', code.codeHash)).not.toHaveProperty('consumedAt')
      expect(await store().codes.findCode('acme', sha256('nan'))).toBeUndefined()
    })

    it('hands out copies: changing a found code changes nothing stored', async () => {
      const code = codeRecord()
      await store().codes.saveCode(code)
      code.claims.email = 'mallory@example.com'
      const found = await store().codes.findCode('acme', code.codeHash)
      if (found) (found.claims.roles as string[]).push('root')
      expect((await store().codes.findCode('acme', code.codeHash))?.claims).toStrictEqual(
        codeRecord().claims,
      )
    })
  })
}
