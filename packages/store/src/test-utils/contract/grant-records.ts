import { describe, expect, it } from 'vitest'
import {
  codeRecord,
  freshStoreEach,
  hour,
  minute,
  refreshFamily,
  sha256,
  startFamily,
  t0,
  type OpenStore,
} from './fixtures.js'

/** What codes and families keep: tenants apart, and the OpenID Connect fields of a sign-in. */
export function grantRecordsContract(open: OpenStore): void {
  describe('tenants', () => {
    const store = freshStoreEach(open)

    it('keeps codes, families and tokens of two tenants apart', async () => {
      for (const tenant of ['acme', 'globex']) {
        await store().codes.saveCode(codeRecord({ tenant, sub: `${tenant}-user` }))
        await startFamily(store(), refreshFamily({ tenant }), sha256('rt-1'))
        await startFamily(store(), refreshFamily({ tenant, familyId: 'family-2' }), sha256('rt-2'))
      }
      const code = sha256('code-1')
      expect((await store().codes.findCode('globex', code))?.sub).toBe('globex-user')
      expect(await store().codes.findCode('initech', code)).toBeUndefined()

      expect(await store().codes.redeemCode('acme', code, t0, undefined)).toBe(true)
      expect(await store().codes.findCode('globex', code)).not.toHaveProperty('consumedAt')

      expect(
        (await store().refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('n'), t0))
          .status,
      ).toBe('rotated')
      await store().refreshTokens.revokeFamily('acme', 'family-2', t0)
      await store().refreshTokens.revokeFamiliesByCode('acme', code, t0)
      expect(await store().refreshTokens.findRefreshToken('globex', sha256('n'))).toBeUndefined()
      expect(
        await store().refreshTokens.rotateRefreshToken('initech', sha256('rt-1'), sha256('m'), t0),
      ).toEqual({ status: 'not_found' })
      const globex = await store().refreshTokens.findRefreshToken('globex', sha256('rt-1'))
      expect(globex?.token).not.toHaveProperty('spentAt')
      expect(globex?.family).not.toHaveProperty('revokedAt')
      expect(
        (await store().refreshTokens.findRefreshToken('globex', sha256('rt-2')))?.family,
      ).not.toHaveProperty('revokedAt')
    })
  })

  describe('OpenID Connect fields of codes and families', () => {
    const store = freshStoreEach(open)

    const oidc = { nonce: 'n-0S6_WzA2Mj', sid: 'sid-1', authTime: t0 - minute }

    it('keeps nonce, sid and authTime of a code, and leaves them out when absent', async () => {
      const code = codeRecord({ ...oidc })
      await store().codes.saveCode(code)
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual(code)
      const plain = codeRecord({
        codeHash: sha256('plain'),
        nonce: undefined,
        sid: undefined,
        authTime: undefined,
      })
      await store().codes.saveCode(plain)
      const found = await store().codes.findCode('acme', plain.codeHash)
      expect(found).toStrictEqual(codeRecord({ codeHash: sha256('plain') }))
      for (const field of ['nonce', 'sid', 'authTime']) expect(found).not.toHaveProperty(field)
    })

    it('echoes a nonce byte for byte: U+0000, quotes, astral characters, 1024 of them', async () => {
      const nonces = ['a\u0000b', '"\'<>&\\ %00', '\u{1F600}é\u00a0', 'x'.repeat(1024), '']
      for (const [i, nonce] of nonces.entries()) {
        const code = codeRecord({ codeHash: sha256(`nonce-${i}`), nonce })
        await store().codes.saveCode(code)
        expect((await store().codes.findCode('acme', code.codeHash))?.nonce).toBe(nonce)
      }
    })

    it('keeps them on a redeemed code, and sid and authTime on the family it starts', async () => {
      const code = codeRecord({ ...oidc })
      await store().codes.saveCode(code)
      const family = refreshFamily({ sid: oidc.sid, authTime: oidc.authTime })
      const rt = sha256('rt-oidc')
      expect(
        await store().codes.redeemCode('acme', code.codeHash, t0 + minute, {
          family,
          tokenHash: rt,
        }),
      ).toBe(true)
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual({
        ...code,
        consumedAt: t0 + minute,
      })
      expect(await store().refreshTokens.findFamily('acme', family.familyId)).toStrictEqual(family)
      expect(await store().refreshTokens.findRefreshToken('acme', rt)).toStrictEqual({
        token: { tokenHash: rt, familyId: family.familyId, createdAt: t0 + minute },
        family,
      })
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', rt, sha256('rt-2'), t0 + hour),
      ).toStrictEqual({ status: 'rotated', family })
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', rt, sha256('rt-3'), t0 + 2 * hour),
      ).toStrictEqual({ status: 'reused', family: { ...family, revokedAt: t0 + 2 * hour } })
      expect(
        await store().refreshTokens.rotateRefreshToken(
          'acme',
          sha256('rt-2'),
          sha256('rt-4'),
          t0 + 3 * hour,
        ),
      ).toStrictEqual({ status: 'inactive', family: { ...family, revokedAt: t0 + 2 * hour } })
    })

    it('leaves sid and authTime out of a family created without them', async () => {
      await startFamily(store(), refreshFamily(), sha256('rt-1'))
      const found = await store().refreshTokens.findFamily('acme', 'family-1')
      expect(found).toStrictEqual(refreshFamily())
      expect(found).not.toHaveProperty('sid')
      expect(found).not.toHaveProperty('authTime')
    })

    it('refuses a nonce or sid that is not well-formed text, or an authTime that is not an integer', async () => {
      for (const fields of [
        { nonce: 'x\ud800' },
        { sid: 7 as unknown as string },
        { authTime: t0 + 0.5 },
      ]) {
        await expect(store().codes.saveCode(codeRecord(fields))).rejects.toThrow(TypeError)
      }
      expect(await store().codes.findCode('acme', codeRecord().codeHash)).toBeUndefined()
      await store().codes.saveCode(codeRecord())
      for (const fields of [{ sid: 'x\udc00' }, { authTime: Number.NaN }]) {
        await expect(
          store().codes.redeemCode('acme', codeRecord().codeHash, t0, {
            family: refreshFamily(fields),
          }),
        ).rejects.toThrow(TypeError)
      }
      expect(await store().codes.findCode('acme', codeRecord().codeHash)).not.toHaveProperty(
        'consumedAt',
      )
    })
  })
}
