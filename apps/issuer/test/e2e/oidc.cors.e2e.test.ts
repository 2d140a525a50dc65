import { describe, expect, it } from 'vitest'
import { send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { OIDC_RS, signInOpenId } from '../support/oidc.js'

// The origin of client A's redirect URI (http://localhost:9000/a/cb): a page there may call the
// OpenID endpoints that browsers fetch; an unlisted origin gets no CORS headers.
const ORIGIN = 'http://localhost:9000'
const T = OIDC_RS

describe('OpenID Connect endpoints and CORS', () => {
  const issuer = useIssuer({ config: 'oidc' })

  it('answers discovery to an allowed origin, GET and HEAD, and not to another', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await send(issuer.url, {
        method,
        path: '/.well-known/openid-configuration',
        host: T.host,
        headers: { origin: ORIGIN },
      })
      expect(res.status).toBe(200)
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
      expect(res.headers.vary).toMatch(/origin/i)
    }
    const other = await send(issuer.url, {
      path: '/.well-known/openid-configuration',
      host: T.host,
      headers: { origin: 'https://evil.test' },
    })
    expect(other.status).toBe(200)
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('answers a preflight of /userinfo with its methods and the Authorization header', async () => {
    const res = await send(issuer.url, {
      method: 'OPTIONS',
      path: '/userinfo',
      host: T.host,
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    })
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(res.headers['access-control-allow-methods']).toContain('GET')
    expect(res.headers['access-control-allow-methods']).toContain('POST')
    expect(res.headers['access-control-allow-headers']).toMatch(/authorization/i)
  })

  it('lets an allowed origin read /userinfo and its WWW-Authenticate challenge', async () => {
    const { tokens } = await signInOpenId(issuer.url, T, T.a, { params: { nonce: 'n-cors' } })
    const ok = await send(issuer.url, {
      path: '/userinfo',
      host: T.host,
      headers: { origin: ORIGIN, authorization: `Bearer ${tokens.access_token}` },
    })
    expect(ok.status).toBe(200)
    expect(ok.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(ok.json).toMatchObject({ sub: expect.any(String) as string })

    const denied = await send(issuer.url, {
      method: 'HEAD',
      path: '/userinfo',
      host: T.host,
      headers: { origin: ORIGIN },
    })
    expect(denied.status).toBe(401)
    expect(denied.headers['www-authenticate']).toBe(`Bearer realm="${T.issuer}"`)
    expect(denied.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(denied.headers['access-control-expose-headers']).toMatch(/www-authenticate/i)
  })

  it('never answers CORS on /logout, a navigation', async () => {
    const res = await send(issuer.url, {
      path: '/logout',
      host: T.host,
      headers: { origin: ORIGIN },
    })
    expect(res.status).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })
})
