import { importJWK, type JWK } from 'jose'
import { describe, expect, it } from 'vitest'
import { generateRsaKey } from './generate.js'

describe('generateRsaKey', () => {
  it('makes an active 2048-bit RS256 pair with a bare public JWK', async () => {
    const now = Date.UTC(2025, 2, 10)
    const key = await generateRsaKey('acme', '2025-03-10', now)

    expect(key).toMatchObject({
      tenant: 'acme',
      kid: '2025-03-10',
      alg: 'RS256',
      createdAt: now,
      state: 'active',
    })
    expect(key.retiredAt).toBeUndefined()

    const pub = JSON.parse(key.publicJwk) as Record<string, string>
    expect(Object.keys(pub).sort()).toEqual(['e', 'kty', 'n'])
    expect(pub.kty).toBe('RSA')
    expect(Buffer.from(pub.n ?? '', 'base64url')).toHaveLength(256)

    const priv = JSON.parse(key.privateKey) as JWK & Record<string, string>
    expect(Object.keys(priv).sort()).toEqual(['d', 'dp', 'dq', 'e', 'kty', 'n', 'p', 'q', 'qi'])
    expect(priv.n).toBe(pub.n)
    await expect(importJWK(priv, 'RS256')).resolves.toBeDefined()
  })

  it('makes a different pair each time', async () => {
    const a = await generateRsaKey('acme', '2025-03-10', 0)
    const b = await generateRsaKey('acme', '2025-03-10', 0)
    expect(a.publicJwk).not.toBe(b.publicJwk)
  })

  it('throws a TypeError for an empty tenant', async () => {
    await expect(generateRsaKey('', '2025-03-10', 0)).rejects.toThrow(TypeError)
  })
})
