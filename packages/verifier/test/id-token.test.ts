import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier, renderError, VerifierError } from '../src/index.js'
import type { Verifier } from '../src/index.js'
import { claims, createTestKey, SECRET, signHs256, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'

// A tenant with OpenID Connect clients signs ID tokens with the keys of its JWKS. An
// ID token must not pass for an access token, however good its signature.
const NOW = Date.UTC(2026, 10, 24, 8)
let key: TestKey
let jwks: JwksServer
let verifier: Verifier

beforeAll(async () => {
  key = await createTestKey('2026-11-24')
  jwks = await startJwksServer([key.jwk])
  verifier = createVerifier({ issuer: jwks.issuer, secret: SECRET, now: () => NOW })
})
afterAll(async () => {
  await jwks.close()
})

async function refusal(token: string): Promise<VerifierError> {
  try {
    await verifier.verify(token)
  } catch (error) {
    if (error instanceof VerifierError) return error
    throw error
  }
  throw new Error('the token was accepted')
}

describe('an ID token offered as an access token', () => {
  const nowSeconds = Math.floor(NOW / 1000)

  it.each(['nonce', 'at_hash', 'azp'])(
    'is refused when it carries %s, signed by the issuer, before any key fetch',
    async (claim) => {
      const hits = jwks.hits
      const error = await refusal(
        await signRs256(key, claims(jwks.issuer, nowSeconds, { [claim]: 'x' })),
      )
      expect(error).toMatchObject({ code: 'ERR_CLAIM_INVALID', claim })
      expect(error.message).toBe('an ID token is not an access token')
      expect(jwks.hits).toBe(hits)
      const response = renderError(error)
      expect(response.status).toBe(401)
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="invalid_token", error_description="an ID token is not an access token"',
      )
      expect(JSON.parse(response.body)).toEqual({
        error: 'invalid_token',
        error_description: 'an ID token is not an access token',
      })
    },
  )

  it('is refused as an ID token, whatever the value, even with a valid signature', async () => {
    const idToken = claims(jwks.issuer, nowSeconds, {
      aud: 'app',
      azp: 'app',
      nonce: 'n-0S6_WzA2Mj',
      at_hash: '77QmUPtjPfzWtF2AnpK9RQ',
      auth_time: nowSeconds,
    })
    expect(await refusal(await signRs256(key, idToken))).toMatchObject({ claim: 'nonce' })
    expect(await refusal(await signRs256(key, { ...idToken, nonce: undefined }))).toMatchObject({
      claim: 'at_hash',
    })
    expect(
      await refusal(await signRs256(key, claims(jwks.issuer, nowSeconds, { azp: null }))),
    ).toMatchObject({ claim: 'azp' })
    expect(
      await refusal(await signHs256(claims(jwks.issuer, nowSeconds, { nonce: '' }))),
    ).toMatchObject({ code: 'ERR_CLAIM_INVALID', claim: 'nonce' })
  })

  it('leaves access tokens alone', async () => {
    const rs = await verifier.verify(await signRs256(key, claims(jwks.issuer, nowSeconds)))
    expect(rs.payload.sub).toBe('user-1')
    const hs = await verifier.verify(await signHs256(claims(jwks.issuer, nowSeconds)))
    expect(hs.payload.sub).toBe('user-1')
  })
})
