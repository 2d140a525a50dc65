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

const RESOURCES = ['https://mcp.acme.test/mcp', 'urn:acme:billing']

/** The resources (RFC 8707) a sign-in named: kept with its code and its refresh family. */
export function resourcesContract(open: OpenStore): void {
  describe('resource indicators', () => {
    const store = freshStoreEach(open)

    it('keeps the resources of a code, the family it starts, and every rotation of it', async () => {
      const code = codeRecord({ resources: RESOURCES })
      await store().codes.saveCode(code)
      expect(await store().codes.findCode('acme', code.codeHash)).toStrictEqual(code)
      const family = refreshFamily({ resources: [...RESOURCES] })
      const rt = sha256('rt-resources')
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
      expect(
        await store().refreshTokens.rotateRefreshTokenForClient(
          'acme',
          family.clientId,
          rt,
          sha256('rt-resources-2'),
          t0 + hour,
        ),
      ).toStrictEqual({ status: 'rotated', family })
    })

    it('leaves resources out of a code and a family that named none', async () => {
      await store().codes.saveCode(codeRecord())
      expect(await store().codes.findCode('acme', codeRecord().codeHash)).not.toHaveProperty(
        'resources',
      )
      await startFamily(store(), refreshFamily(), sha256('rt-1'))
      expect(await store().refreshTokens.findFamily('acme', 'family-1')).not.toHaveProperty(
        'resources',
      )
    })

    it('refuses resources that are not a non-empty list of URIs without whitespace', async () => {
      const bad = [[], [''], ['https://a.test/ x'], [7]] as unknown as string[][]
      for (const [index, resources] of bad.entries()) {
        await expect(store().codes.saveCode(codeRecord({ resources }))).rejects.toThrow(TypeError)
        const family = refreshFamily({ familyId: `family-bad-${index}`, resources })
        await expect(startFamily(store(), family, sha256(`rt-bad-${index}`))).rejects.toThrow(
          TypeError,
        )
      }
      expect(await store().codes.findCode('acme', codeRecord().codeHash)).toBeUndefined()
    })
  })
}
