import type { RotateResult } from '@tessera/grants'
import { expect, it } from 'vitest'
import type { Store } from '../../store.js'
import { hour, refreshFamily, sha256, startFamily, storeError, t0 } from './fixtures.js'

/** One of the port's two rotations, for the client of the contract's families. */
export type Rotate = (
  tenant: string,
  oldHash: string,
  newHash: string,
  now: number,
) => Promise<RotateResult>

/**
 * The rules of a rotation, which rotateRefreshToken and rotateRefreshTokenForClient (for the
 * family's own client) share. Runs inside a describe whose beforeEach starts `refreshFamily()`
 * with the token `sha256('rt-1')`.
 */
export function rotationTests(store: () => Store, rotate: Rotate): void {
  const family = refreshFamily()
  const first = sha256('rt-1')
  const second = sha256('rt-2')

  it('rotates a live token: the old one is spent, the new one is live in the same family', async () => {
    expect(await rotate('acme', first, second, t0 + hour)).toStrictEqual({
      status: 'rotated',
      family,
    })
    expect(await store().refreshTokens.findRefreshToken('acme', first)).toMatchObject({
      token: { spentAt: t0 + hour },
    })
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toStrictEqual({
      token: { tokenHash: second, familyId: family.familyId, createdAt: t0 + hour },
      family,
    })
    const third = sha256('rt-3')
    expect((await rotate('acme', second, third, t0 + 2 * hour)).status).toBe('rotated')
  })

  it('answers reused for a spent token and revokes the whole family', async () => {
    await rotate('acme', first, second, t0 + hour)
    expect(await rotate('acme', first, sha256('rt-x'), t0 + 2 * hour)).toStrictEqual({
      status: 'reused',
      family: { ...family, revokedAt: t0 + 2 * hour },
    })
    expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-x'))).toBeUndefined()
    // The live token dies with its family.
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toMatchObject({
      token: { tokenHash: second },
      family: { revokedAt: t0 + 2 * hour },
    })
    expect(await rotate('acme', second, sha256('rt-y'), t0 + 3 * hour)).toStrictEqual({
      status: 'inactive',
      family: { ...family, revokedAt: t0 + 2 * hour },
    })
  })

  it('keeps answering reused for a spent token, with the time of the first revocation', async () => {
    await rotate('acme', first, second, t0 + hour)
    await rotate('acme', first, sha256('a'), t0 + 2 * hour)
    expect(await rotate('acme', first, sha256('b'), t0 + 3 * hour)).toStrictEqual({
      status: 'reused',
      family: { ...family, revokedAt: t0 + 2 * hour },
    })
  })

  it('answers inactive for a live token of a revoked family and changes nothing', async () => {
    await store().refreshTokens.revokeFamily('acme', family.familyId, t0 + hour)
    expect(await rotate('acme', first, second, t0 + 2 * hour)).toStrictEqual({
      status: 'inactive',
      family: { ...family, revokedAt: t0 + hour },
    })
    expect(await store().refreshTokens.findRefreshToken('acme', first)).toMatchObject({
      token: { tokenHash: first },
    })
    expect((await store().refreshTokens.findRefreshToken('acme', first))?.token).not.toHaveProperty(
      'spentAt',
    )
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
  })

  it('answers inactive once the family has expired, spent token or not, and changes nothing', async () => {
    await rotate('acme', first, second, t0 + hour)
    for (const presented of [first, second]) {
      expect(await rotate('acme', presented, sha256('rt-x'), family.expiresAt)).toStrictEqual({
        status: 'inactive',
        family,
      })
    }
    expect(
      (await store().refreshTokens.findRefreshToken('acme', second))?.token,
    ).not.toHaveProperty('spentAt')
    expect(await store().refreshTokens.findRefreshToken('acme', sha256('rt-x'))).toBeUndefined()
  })

  it('answers not_found for an unknown token', async () => {
    expect(await rotate('acme', sha256('nope'), second, t0)).toEqual({ status: 'not_found' })
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
  })

  it('lets one of 20 concurrent rotations of a token win; the rest revoke the family', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => rotate('acme', first, sha256(`next-${i}`), t0 + hour)),
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
    const error = await storeError(rotate('acme', first, second, t0 + hour))
    expect(error.code).toBe('ERR_STORE_CONFLICT')
    expect((await store().refreshTokens.findRefreshToken('acme', first))?.token).not.toHaveProperty(
      'spentAt',
    )
    expect(await store().refreshTokens.findRefreshToken('acme', second)).toMatchObject({
      family: { familyId: 'family-2' },
    })
  })
}
