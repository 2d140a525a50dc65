import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier } from '../src/index.js'
import { clientCredentialsToken, JWT_SECRET, loopbackFetch, startIssuer } from './support/issuer.js'
import type { IssuerProcess } from './support/issuer.js'

// A service's client_credentials token carries the same claims as a user's, with
// sub = client_id; the verifier takes it unchanged under both algorithms.
const AUDIENCE = 'https://api.verifier.test'
const HS = { host: 'hs.verifier.test:8080', id: '44444444-4444-4444-8444-444444444444' }
const RS = { host: 'rs.verifier.test:8080', id: '55555555-5555-4555-8555-555555555555' }

let issuer: IssuerProcess
beforeAll(async () => {
  issuer = await startIssuer()
})
afterAll(async () => {
  await issuer.stop()
})

describe('client_credentials tokens from a real issuer', () => {
  it('verifies HS256 and RS256 service tokens, sub being the client', async () => {
    const verifier = createVerifier({
      issuer: [`http://${HS.host}`, `http://${RS.host}`],
      audience: AUDIENCE,
      secret: JWT_SECRET,
      fetch: loopbackFetch(issuer.url),
    })
    const hsToken = await clientCredentialsToken(issuer.url, HS.host, {
      id: HS.id,
      secret: 'service-secret-1',
    })
    const rsToken = await clientCredentialsToken(
      issuer.url,
      RS.host,
      { id: RS.id, secret: 'service-secret-2' },
      'read',
    )
    expect(decodeProtectedHeader(hsToken)).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(decodeProtectedHeader(rsToken)).toMatchObject({ alg: 'RS256', typ: 'JWT' })

    const hs = await verifier.verify(hsToken)
    expect(hs.payload).toMatchObject({
      iss: `http://${HS.host}`,
      sub: HS.id,
      client_id: HS.id,
      aud: AUDIENCE,
      scope: 'read write',
    })
    const rs = await verifier.verify(rsToken)
    expect(rs.payload).toMatchObject({
      iss: `http://${RS.host}`,
      sub: RS.id,
      client_id: RS.id,
      aud: AUDIENCE,
      scope: 'read',
    })
    expect(rs.protectedHeader.alg).toBe('RS256')
    expect(verifier.stats()).toMatchObject({ accepted: { HS256: 1, RS256: 1 } })
  })

  it('refuses a service token of one tenant presented as another tenant', async () => {
    const hsToken = await clientCredentialsToken(issuer.url, HS.host, {
      id: HS.id,
      secret: 'service-secret-1',
    })
    const rsOnly = createVerifier({
      issuer: `http://${RS.host}`,
      audience: AUDIENCE,
      secret: JWT_SECRET,
      fetch: loopbackFetch(issuer.url),
    })
    await expect(rsOnly.verify(hsToken)).rejects.toMatchObject({ code: 'ERR_ISSUER_UNKNOWN' })
  })
})
