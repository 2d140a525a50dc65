import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { verifyRequest } from './fetch.js'
import type { VerifierEvent } from './options.js'
import { createVerifier } from './verifier.js'

const SECRET = 'an-hs256-secret-of-at-least-32-chars'
const ISSUER = 'https://issuer.test'

async function hs256Token(): Promise<string> {
  return new SignJWT({ scope: 'orders:read' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET))
}

describe('an HS256 token at a verifier without secret', () => {
  it('is refused with a description saying that HS256 needs the secret', async () => {
    const events: VerifierEvent[] = []
    const verifier = createVerifier({ issuer: ISSUER, onEvent: (event) => events.push(event) })
    const token = await hs256Token()

    await expect(verifier.verify(token)).rejects.toMatchObject({
      code: 'ERR_ALG_NOT_ALLOWED',
      message: 'The token algorithm HS256 needs a secret, and this verifier has none',
    })
    expect(events).toEqual([
      {
        type: 'token_rejected',
        code: 'ERR_ALG_NOT_ALLOWED',
        alg: 'HS256',
        issuer: ISSUER,
        hint: 'HS256 tokens need the secret option',
      },
    ])

    const request = new Request('https://api.test/orders', {
      headers: { authorization: `Bearer ${token}` },
    })
    const result = await verifyRequest(request, verifier)
    expect(result.ok).toBe(false)
    if (result.ok) return
    // RFC 6750 §3: still a 401 invalid_token; the description names the missing option only.
    expect(result.response.status).toBe(401)
    expect(result.response.headers.get('www-authenticate')).toBe(
      'Bearer realm="api", error="invalid_token", ' +
        'error_description="The token algorithm HS256 needs a secret, and this verifier has none"',
    )
    const body = await result.response.text()
    expect(body).not.toContain(SECRET)
    expect(body).not.toContain(token)
  })

  it('keeps the plain refusal when a secret is set but algorithms leaves HS256 out', async () => {
    const events: VerifierEvent[] = []
    const verifier = createVerifier({
      issuer: ISSUER,
      secret: SECRET,
      algorithms: ['RS256'],
      onEvent: (event) => events.push(event),
    })
    await expect(verifier.verify(await hs256Token())).rejects.toMatchObject({
      code: 'ERR_ALG_NOT_ALLOWED',
      message: 'The token algorithm is not accepted',
    })
    expect(events).toEqual([
      { type: 'token_rejected', code: 'ERR_ALG_NOT_ALLOWED', issuer: ISSUER },
    ])
  })

  it('keeps the plain refusal for other algorithms', async () => {
    const verifier = createVerifier({ issuer: ISSUER })
    const header = Buffer.from('{"alg":"HS512"}').toString('base64url')
    const payload = Buffer.from(JSON.stringify({ iss: ISSUER, exp: 1e10 })).toString('base64url')
    await expect(verifier.verify(`${header}.${payload}.c2ln`)).rejects.toMatchObject({
      code: 'ERR_ALG_NOT_ALLOWED',
      message: 'The token algorithm is not accepted',
    })
  })
})
