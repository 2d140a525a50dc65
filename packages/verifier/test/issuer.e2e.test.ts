import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier, VerifierError } from '../src/index.js'
import { JWT_SECRET, loopbackFetch, passwordToken, startIssuer } from './support/issuer.js'
import type { IssuerProcess } from './support/issuer.js'

const AUDIENCE = 'https://api.verifier.test'
const HS = {
  host: 'hs.verifier.test:8080',
  id: '11111111-1111-4111-8111-111111111111',
  secret: 'secret-1-01234567',
}
const RS = {
  host: 'rs.verifier.test:8080',
  id: '22222222-2222-4222-8222-222222222222',
  secret: 'secret-2-01234567',
}
const OTHER = {
  host: 'other.verifier.test:8080',
  id: '33333333-3333-4333-8333-333333333333',
  secret: 'secret-3-01234567',
}

let issuer: IssuerProcess
beforeAll(async () => {
  issuer = await startIssuer()
})
afterAll(async () => {
  await issuer.stop()
})

describe('against a real issuer', () => {
  it('accepts HS256 and RS256 tokens of two tenants in one verifier, and refuses a third by iss', async () => {
    const calls: string[] = []
    const verifier = createVerifier({
      issuer: [`http://${HS.host}`, `http://${RS.host}`],
      audience: AUDIENCE,
      secret: JWT_SECRET,
      fetch: loopbackFetch(issuer.url, calls),
    })
    const hsToken = await passwordToken(issuer.url, HS.host, HS, 'read')
    const rsToken = await passwordToken(issuer.url, RS.host, RS)
    const otherToken = await passwordToken(issuer.url, OTHER.host, OTHER)
    expect(decodeProtectedHeader(hsToken)).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(decodeProtectedHeader(rsToken)).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    expect(decodeProtectedHeader(rsToken).kid).toMatch(/^\d{4}-\d{2}-\d{2}(\.\d+)?$/)

    const [hs, rs] = await Promise.all([verifier.verify(hsToken), verifier.verify(rsToken)])
    expect(hs.payload).toMatchObject({
      iss: `http://${HS.host}`,
      sub: 'u',
      aud: AUDIENCE,
      client_id: HS.id,
      scope: 'read',
    })
    expect(rs.payload).toMatchObject({
      iss: `http://${RS.host}`,
      sub: 'u',
      client_id: RS.id,
      scope: 'read write',
    })
    expect(rs.protectedHeader.alg).toBe('RS256')

    // Same secret, other tenant: only iss tells them apart.
    const refused = await verifier.verify(otherToken).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(VerifierError)
    expect((refused as VerifierError).code).toBe('ERR_ISSUER_UNKNOWN')

    // Many more tokens, one JWKS fetch, and only for the RS256 tenant.
    const more = await Promise.all([
      passwordToken(issuer.url, RS.host, RS),
      passwordToken(issuer.url, HS.host, HS),
    ])
    await Promise.all(
      more.flatMap((token) => Array.from({ length: 50 }, () => verifier.verify(token))),
    )
    expect(calls).toEqual([`http://${RS.host}/.well-known/jwks.json`])
    expect(verifier.stats()).toMatchObject({ jwksFetches: 1, accepted: { HS256: 51, RS256: 51 } })
  })

  it('refuses the RS256 tenant once RS256 is dropped, and HS256 once HS256 is dropped', async () => {
    const rsToken = await passwordToken(issuer.url, RS.host, RS)
    const hsToken = await passwordToken(issuer.url, HS.host, HS)
    const rsOnly = createVerifier({
      issuer: [`http://${HS.host}`, `http://${RS.host}`],
      secret: JWT_SECRET,
      algorithms: ['RS256'],
      fetch: loopbackFetch(issuer.url),
    })
    await expect(rsOnly.verify(rsToken)).resolves.toBeDefined()
    await expect(rsOnly.verify(hsToken)).rejects.toMatchObject({ code: 'ERR_ALG_NOT_ALLOWED' })
    const hsOnly = createVerifier({
      issuer: [`http://${HS.host}`, `http://${RS.host}`],
      secret: JWT_SECRET,
      algorithms: ['HS256'],
      fetch: () => Promise.reject(new Error('no fetch expected')),
    })
    await expect(hsOnly.verify(hsToken)).resolves.toBeDefined()
    await expect(hsOnly.verify(rsToken)).rejects.toMatchObject({ code: 'ERR_ALG_NOT_ALLOWED' })
  })

  it('refuses a token signed for another audience', async () => {
    const verifier = createVerifier({
      issuer: `http://${HS.host}`,
      audience: 'https://somewhere-else.test',
      secret: JWT_SECRET,
    })
    const token = await passwordToken(issuer.url, HS.host, HS)
    await expect(verifier.verify(token)).rejects.toMatchObject({
      code: 'ERR_CLAIM_INVALID',
      claim: 'aud',
    })
  })
})
