import { expect, it } from 'vitest'
import type { Store } from '../../store.js'
import { codeRecord, hour, minute, refreshFamily, sha256, startFamily, t0 } from './fixtures.js'

/**
 * What rotateRefreshTokenForClient adds to a rotation: a token of another client, or of another
 * tenant, is not found and changes nothing. Runs inside a describe whose beforeEach starts
 * `refreshFamily()` with the token `sha256('rt-1')`.
 */
export function rotateForClientTests(store: () => Store): void {
  const family = refreshFamily()
  const first = sha256('rt-1')
  const second = sha256('rt-2')
  const rotate = (clientId: string, oldHash: string, newHash: string, now: number) =>
    store().refreshTokens.rotateRefreshTokenForClient(
      family.tenant,
      clientId,
      oldHash,
      newHash,
      now,
    )

  it('rotates a token of the client, as rotateRefreshToken does', async () => {
    expect(await rotate(family.clientId, first, second, t0 + hour)).toStrictEqual({
      status: 'rotated',
      family,
    })
    expect(await store().refreshTokens.findRefreshToken('acme', first)).toMatchObject({
      token: { spentAt: t0 + hour },
    })
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toMatchObject({
      token: { tokenHash: second, createdAt: t0 + hour },
      family,
    })
  })

  it('answers not_found for a live token of another client and changes nothing', async () => {
    expect(await rotate('other-client', first, second, t0 + hour)).toEqual({
      status: 'not_found',
    })
    const found = await store().refreshTokens.findRefreshToken('acme', first)
    expect(found?.token).not.toHaveProperty('spentAt')
    expect(found?.family).not.toHaveProperty('revokedAt')
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
  })

  it('answers not_found for a spent token of another client, without revoking the family', async () => {
    await rotate(family.clientId, first, second, t0 + hour)
    expect(await rotate('other-client', first, sha256('rt-x'), t0 + 2 * hour)).toEqual({
      status: 'not_found',
    })
    const found = await store().refreshTokens.findRefreshToken('acme', second)
    expect(found?.family).not.toHaveProperty('revokedAt')
    expect(found?.token).not.toHaveProperty('spentAt')
  })

  it('answers not_found for a token of another tenant', async () => {
    expect(
      await store().refreshTokens.rotateRefreshTokenForClient(
        'globex',
        family.clientId,
        first,
        second,
        t0 + hour,
      ),
    ).toEqual({ status: 'not_found' })
  })

  it('refuses a time that is not integer epoch milliseconds, or a malformed new hash', async () => {
    await expect(rotate(family.clientId, first, second, t0 + 0.5)).rejects.toBeInstanceOf(TypeError)
    await expect(rotate(family.clientId, first, '\ud800', t0)).rejects.toBeInstanceOf(TypeError)
    expect((await store().refreshTokens.findRefreshToken('acme', first))?.token).not.toHaveProperty(
      'spentAt',
    )
  })

  it('keeps the tokens and families of two tenants apart', async () => {
    await startFamily(store(), refreshFamily({ tenant: 'globex' }), first)
    expect((await rotate(family.clientId, first, sha256('n'), t0)).status).toBe('rotated')
    expect(
      await store().refreshTokens.rotateRefreshTokenForClient(
        'initech',
        family.clientId,
        first,
        sha256('m'),
        t0,
      ),
    ).toEqual({ status: 'not_found' })
    expect(await store().refreshTokens.findRefreshToken('globex', sha256('n'))).toBeUndefined()
    const globex = await store().refreshTokens.findRefreshToken('globex', first)
    expect(globex?.token).not.toHaveProperty('spentAt')
    expect(globex?.family).not.toHaveProperty('revokedAt')
  })

  it('answers the sid and authTime of the family it rotates, reuses or finds inactive', async () => {
    const oidc = refreshFamily({ familyId: 'oidc', sid: 'sid-1', authTime: t0 - minute })
    const code = codeRecord({ codeHash: sha256('code-oidc'), sid: 'sid-1', authTime: t0 - minute })
    const rt = sha256('rt-oidc')
    await store().codes.saveCode(code)
    await store().codes.redeemCode('acme', code.codeHash, t0 + minute, {
      family: oidc,
      tokenHash: rt,
    })
    expect(await rotate(family.clientId, rt, sha256('rt-oidc-2'), t0 + hour)).toStrictEqual({
      status: 'rotated',
      family: oidc,
    })
    expect(await rotate(family.clientId, rt, sha256('rt-oidc-3'), t0 + 2 * hour)).toStrictEqual({
      status: 'reused',
      family: { ...oidc, revokedAt: t0 + 2 * hour },
    })
    expect(
      await rotate(family.clientId, sha256('rt-oidc-2'), sha256('rt-oidc-4'), t0 + 3 * hour),
    ).toStrictEqual({ status: 'inactive', family: { ...oidc, revokedAt: t0 + 2 * hour } })
  })
}
