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

// RFC 7638 thumbprints as `dpop_jkt` carries them.
const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'
const OTHER_JKT = '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I'

/** The DPoP key (RFC 9449) a code must be redeemed with, and a refresh family is bound to. */
export function dpopContract(open: OpenStore): void {
  describe('DPoP key bindings', () => {
    const store = freshStoreEach(open)

    it('keeps the dpop_jkt of a code, and the key of the family it starts through every rotation', async () => {
      const code = codeRecord({ dpopJkt: JKT })
      await store().codes.saveCode(code)
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual(code)
      const family = refreshFamily({ dpopJkt: OTHER_JKT })
      const rt = sha256('rt-dpop')
      expect(
        await store().codes.redeemCode('acme', code.codeHash, t0 + minute, {
          family,
          tokenHash: rt,
        }),
      ).toBe(true)
      expect(await store().refreshTokens.findFamily('acme', family.familyId)).toStrictEqual(family)
      expect((await store().refreshTokens.findRefreshToken('acme', rt))?.family).toStrictEqual(
        family,
      )
      const next = sha256('rt-dpop-2')
      expect(
        await store().refreshTokens.rotateRefreshTokenForClient(
          'acme',
          family.clientId,
          rt,
          next,
          t0 + hour,
        ),
      ).toStrictEqual({ status: 'rotated', family })
      expect(
        await store().refreshTokens.rotateRefreshToken('acme', next, sha256('rt-3'), t0 + hour),
      ).toStrictEqual({ status: 'rotated', family })
    })

    it('leaves dpopJkt out of a code and a family that are not bound', async () => {
      await store().codes.saveCode(codeRecord())
      expect(await store().codes.findCode('acme', codeRecord().codeHash)).not.toHaveProperty(
        'dpopJkt',
      )
      await startFamily(store(), refreshFamily(), sha256('rt-1'))
      expect(await store().refreshTokens.findFamily('acme', 'family-1')).not.toHaveProperty(
        'dpopJkt',
      )
      expect(
        (await store().refreshTokens.findRefreshToken('acme', sha256('rt-1')))?.family,
      ).not.toHaveProperty('dpopJkt')
    })

    it('refuses a dpopJkt that is not a base64url SHA-256 thumbprint', async () => {
      const bad = ['', 7, 'short', `${JKT}=`, JKT.replace('-', '+')] as unknown as string[]
      for (const [index, dpopJkt] of bad.entries()) {
        await expect(store().codes.saveCode(codeRecord({ dpopJkt }))).rejects.toThrow(TypeError)
        const family = refreshFamily({ familyId: `family-bad-${index}`, dpopJkt })
        await expect(startFamily(store(), family, sha256(`rt-bad-${index}`))).rejects.toThrow(
          TypeError,
        )
      }
      expect(await store().codes.findCode('acme', codeRecord().codeHash)).toBeUndefined()
    })
  })
}
