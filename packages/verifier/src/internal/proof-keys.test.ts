import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { ProofKeyCache } from './proof-keys.js'

async function client() {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwk = await exportJWK(publicKey)
  const proof = (jti: string) =>
    new SignJWT({ jti }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey)
  return { jwk, proof }
}

describe('ProofKeyCache', () => {
  it('imports the key of one header once, with its thumbprint', async () => {
    const cache = new ProofKeyCache()
    const a = await client()
    const first = await cache.of(await a.proof('1'))
    expect(first.jkt).toBe(await calculateJwkThumbprint(a.jwk))
    expect(first.key.type).toBe('public')
    expect(await cache.of(await a.proof('2'))).toBe(first)
    const b = await client()
    const other = await cache.of(await b.proof('1'))
    expect(other).not.toBe(first)
    expect(other.jkt).toBe(await calculateJwkThumbprint(b.jwk))
  })

  it('refuses a header whose key jose cannot import for its alg', async () => {
    const cache = new ProofKeyCache()
    const { jwk } = await client()
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'dpop+jwt', jwk }))
    await expect(cache.of(`${header.toString('base64url')}.e30.c2ln`)).rejects.toMatchObject({
      code: 'ERR_DPOP_PROOF_INVALID',
      claim: 'jwk',
    })
  })
})
