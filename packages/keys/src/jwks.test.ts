import { beforeAll, describe, expect, it } from 'vitest'
import { generateRsaKey } from './generate.js'
import { createJwks, isPublished } from './jwks.js'
import type { StoredKey } from './ports.js'

const hour = 3_600_000
const now = Date.UTC(2025, 2, 10, 12)
let base: StoredKey

beforeAll(async () => {
  base = await generateRsaKey('acme', '2025-03-10', now)
})

function key(kid: string, fields: Partial<StoredKey>): StoredKey {
  return { ...base, kid, ...fields }
}

describe('isPublished', () => {
  it('publishes active keys and retired keys within the grace, never revoked ones', () => {
    const options = { now, graceMs: 2 * hour }
    expect(isPublished(key('a', { state: 'active' }), options)).toBe(true)
    expect(isPublished(key('b', { state: 'retired', retiredAt: now - hour }), options)).toBe(true)
    expect(isPublished(key('c', { state: 'retired', retiredAt: now - 2 * hour }), options)).toBe(
      false,
    )
    expect(isPublished(key('d', { state: 'revoked' }), options)).toBe(false)
  })
})

describe('createJwks', () => {
  it('lists the active key first, then retired keys newest first, public fields only', () => {
    const doc = createJwks(
      [
        key('2025-03-08', { state: 'retired', retiredAt: now - hour, createdAt: now - 2 * hour }),
        key('2025-03-09', { state: 'retired', retiredAt: now - hour, createdAt: now - hour }),
        key('2025-03-10', { state: 'active' }),
        key('2025-03-07', { state: 'revoked' }),
      ],
      { now, graceMs: 2 * hour },
    )
    expect(doc.keys.map((jwk) => jwk.kid)).toEqual(['2025-03-10', '2025-03-09', '2025-03-08'])
    for (const jwk of doc.keys) {
      expect(Object.keys(jwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
      expect(jwk).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' })
    }
    expect(Object.isFrozen(doc) && Object.isFrozen(doc.keys)).toBe(true)
  })

  it('drops anything but kty, n and e from the stored public JWK', () => {
    const pub = JSON.parse(base.publicJwk) as Record<string, string>
    const priv = JSON.parse(base.privateKey) as Record<string, string>
    const leaky = key('2025-03-10', { publicJwk: JSON.stringify({ ...pub, d: priv.d, k: 'x' }) })
    const [jwk] = createJwks([leaky], { now, graceMs: 0 }).keys
    expect(jwk).not.toHaveProperty('d')
    expect(jwk).not.toHaveProperty('k')
  })

  it('throws ERR_KEY_INVALID for a published key whose JWK does not parse', () => {
    const broken = key('2025-03-10', { publicJwk: '{"kty":"oct","k":"c2VjcmV0"}' })
    expect(() => createJwks([broken], { now, graceMs: 0 })).toThrow(
      expect.objectContaining({ name: 'KeyError', code: 'ERR_KEY_INVALID' }),
    )
  })
})
