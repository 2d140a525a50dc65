import { createVerifier, isVerifierError } from '@tessera/verifier'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { loopbackFetch } from '../support/fetch.js'
import { basicAuth, send } from '../support/http.js'
import { JWT_SECRET, useIssuer } from '../support/issuer.js'
import { OIDC_HS, OIDC_RS, signInOpenId } from '../support/oidc.js'
import type { OidcTenant } from '../support/oidc.js'

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (isVerifierError(error)) return `${error.code}: ${error.message}`
    throw error
  }
  throw new Error('the verifier accepted the token')
}

describe('ID tokens are RS256 everywhere, access tokens keep their tenant algorithm', () => {
  const issuer = useIssuer({ config: 'oidc' })

  async function jwksKids(tenant: OidcTenant): Promise<{ kid: string; kty: string }[]> {
    const res = await send(issuer.url, { path: '/.well-known/jwks.json', host: tenant.host })
    expect(res.status).toBe(200)
    return (res.json as { keys: { kid: string; kty: string }[] }).keys
  }

  async function introspect(tenant: OidcTenant, token: string): Promise<unknown> {
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: tenant.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(tenant.a.id, tenant.a.secret!),
      },
      body: new URLSearchParams({ token }).toString(),
    })
    expect(res.status).toBe(200)
    return res.json
  }

  it('the HS256 tenant signs access tokens with the secret and ID tokens with its RSA key', async () => {
    const { tokens } = await signInOpenId(issuer.url, OIDC_HS, OIDC_HS.a, {
      params: { nonce: 'n-hs' },
    })
    expect(decodeProtectedHeader(tokens.access_token).alg).toBe('HS256')
    const idHeader = decodeProtectedHeader(tokens.id_token!)
    expect(idHeader).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    // The JWKS of an HS256 tenant with openid clients publishes the ID tokens' key.
    expect(await jwksKids(OIDC_HS)).toContainEqual(
      expect.objectContaining({ kid: idHeader.kid, kty: 'RSA' }),
    )

    // A resource server with the shared secret alone takes the access token...
    const bySecret = createVerifier({
      issuer: OIDC_HS.issuer,
      audience: OIDC_HS.audience,
      secret: JWT_SECRET,
      algorithms: ['HS256'],
    })
    const verified = await bySecret.verify(tokens.access_token)
    expect(verified.payload.sub).toBe('user-alice')
    // ...and never the ID token.
    await expect(refusal(bySecret.verify(tokens.id_token!))).resolves.toMatch(/^ERR_/)
  })

  it('the RS256 tenant signs both with its RSA key, from the same JWKS', async () => {
    const { tokens } = await signInOpenId(issuer.url, OIDC_RS, OIDC_RS.a, {
      params: { nonce: 'n-rs' },
    })
    const kids = (await jwksKids(OIDC_RS)).map((key) => key.kid)
    for (const token of [tokens.access_token, tokens.id_token!]) {
      const header = decodeProtectedHeader(token)
      expect(header.alg).toBe('RS256')
      expect(kids).toContain(header.kid)
    }
  })

  it.each([OIDC_RS, OIDC_HS])(
    'the $name tenant: an ID token is never taken as an access token, even by a verifier that accepts its audience and key',
    async (tenant) => {
      const { tokens } = await signInOpenId(issuer.url, tenant, tenant.a, {
        params: { nonce: 'n-any' },
      })
      const idToken = tokens.id_token!
      // Everything but the kind of token would pass: the issuer, the key, the audience.
      const lenient = createVerifier({
        issuer: tenant.issuer,
        audience: [tenant.audience, tenant.a.id],
        secret: JWT_SECRET,
        fetch: loopbackFetch(issuer.url),
      })
      await expect(lenient.verify(tokens.access_token)).resolves.toBeDefined()
      await expect(refusal(lenient.verify(idToken))).resolves.toMatch(
        /an ID token is not an access token/,
      )
      // The issuer's own check agrees: introspection says inactive.
      await expect(introspect(tenant, tokens.access_token)).resolves.toMatchObject({
        active: true,
      })
      await expect(introspect(tenant, idToken)).resolves.toEqual({ active: false })
    },
  )

  it('a JWT signed with the HS256 secret but shaped like an ID token is refused too', async () => {
    const { tokens } = await signInOpenId(issuer.url, OIDC_HS, OIDC_HS.a)
    const claims = decodeJwt(tokens.access_token)
    const verifier = createVerifier({
      issuer: OIDC_HS.issuer,
      audience: OIDC_HS.audience,
      secret: JWT_SECRET,
      algorithms: ['HS256'],
    })
    for (const extra of [{ nonce: 'n' }, { at_hash: 'abc' }, { azp: OIDC_HS.a.id }]) {
      const forged = await new SignJWT({ ...claims, ...extra })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .sign(new TextEncoder().encode(JWT_SECRET))
      await expect(refusal(verifier.verify(forged))).resolves.toMatch(
        /an ID token is not an access token/,
      )
      const userinfo = await send(issuer.url, {
        path: '/userinfo',
        host: OIDC_HS.host,
        headers: { authorization: `Bearer ${forged}` },
      })
      expect(userinfo.status).toBe(401)
      expect(userinfo.headers['www-authenticate']).toContain('error="invalid_token"')
    }
    // The same claims without those three are an ordinary access token.
    const plain = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(JWT_SECRET))
    await expect(verifier.verify(plain)).resolves.toBeDefined()
  })
})
