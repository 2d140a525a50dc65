import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import request from 'supertest'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { FIXTURES, startIssuer, tempDir, useIssuer } from '../support/issuer.js'
import { pkce, signIn } from '../support/oauth.js'

const HOST = 'cors.test'
const SPA = '77777777-7777-4777-8777-777777777777'
const SPA_ORIGIN = 'http://spa.test:8081'
const SPA_REDIRECT = `${SPA_ORIGIN}/callback`
const EXTRA_ORIGIN = 'https://app.cors.test'
const API = '99999999-9999-4999-8999-999999999999'
const API_SECRET = 'cors-api-secret-0'

const PATHS: [string, 'GET' | 'POST'][] = [
  ['/token', 'POST'],
  ['/revoke', 'POST'],
  ['/.well-known/jwks.json', 'GET'],
  ['/.well-known/oauth-authorization-server', 'GET'],
]

/** The CORS response headers a response carries. */
function cors(res: HttpResponse): Record<string, string> {
  return Object.fromEntries(
    Object.entries(res.headers)
      .filter(([name]) => name.startsWith('access-control-'))
      .map(([name, value]) => [name, String(value)]),
  )
}

describe('CORS (browser apps on another origin)', () => {
  let config: string
  const tmp = tempDir()
  afterAll(() => tmp.remove())
  const issuer = useIssuer(() => {
    // A copy the reload test may change; the provider path made absolute for the new folder.
    config = join(tmp.dir, 'tenants.yaml')
    const fixture = readFileSync(join(FIXTURES, 'cors', 'tenants.yaml'), 'utf8')
    writeFileSync(
      config,
      fixture.replaceAll('../basic/providers/', join(FIXTURES, 'basic', 'providers') + '/'),
    )
    return { config }
  })

  function preflight(path: string, origin: string, method = 'POST', host = HOST) {
    return send(issuer.url, {
      method: 'OPTIONS',
      path,
      host,
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type',
      },
    })
  }

  function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    return send(issuer.url, {
      method: 'POST',
      path,
      host: HOST,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  }

  it.each(PATHS)(
    'answers the preflight of %s from a redirect URI origin and an allowed origin',
    async (path, method) => {
      for (const origin of [SPA_ORIGIN, EXTRA_ORIGIN]) {
        const res = await preflight(path, origin, method)
        expect(res.status).toBe(204)
        expect(res.text).toBe('')
        expect(res.headers.vary).toBe('Origin')
        expect(cors(res)).toEqual({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': method === 'GET' ? 'GET, HEAD' : 'POST',
          'access-control-allow-headers': 'Authorization, Content-Type, DPoP',
          'access-control-max-age': '600',
        })
      }
    },
  )

  it('runs code + PKCE, refresh and revocation for the SPA, every answer readable', async () => {
    const headers = { origin: SPA_ORIGIN }
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HOST, {
      clientId: SPA,
      redirectUri: SPA_REDIRECT,
      challenge,
      scope: 'read',
    })
    const exchange = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: SPA_REDIRECT,
      code_verifier: verifier,
      client_id: SPA,
    }
    const token = await post('/token', exchange, headers)
    expect(token.status).toBe(200)
    expect(token.headers['cache-control']).toBe('no-store')
    expect(token.headers.vary).toBe('Origin')
    expect(cors(token)).toEqual({
      'access-control-allow-origin': SPA_ORIGIN,
      'access-control-expose-headers': 'WWW-Authenticate, Retry-After, DPoP-Nonce',
    })
    const tokens = token.json as { access_token: string; refresh_token: string }

    const refreshed = await post(
      '/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: SPA },
      { origin: EXTRA_ORIGIN },
    )
    expect(refreshed.status).toBe(200)
    expect(cors(refreshed)['access-control-allow-origin']).toBe(EXTRA_ORIGIN)
    const { refresh_token } = refreshed.json as { refresh_token: string }

    const revoked = await post('/revoke', { token: refresh_token, client_id: SPA }, headers)
    expect(revoked.status).toBe(200)
    expect(revoked.headers.vary).toBe('Origin')
    expect(cors(revoked)['access-control-allow-origin']).toBe(SPA_ORIGIN)
    const after = await post(
      '/token',
      { grant_type: 'refresh_token', refresh_token, client_id: SPA },
      headers,
    )
    expect(after.status).toBe(400)
    expect(after.json).toMatchObject({ error: 'invalid_grant' })
    expect(cors(after)['access-control-allow-origin']).toBe(SPA_ORIGIN)

    // The app can read why a replayed code fails, too.
    const replay = await post('/token', exchange, headers)
    expect(replay.status).toBe(400)
    expect(replay.json).toMatchObject({ error: 'invalid_grant' })
    expect(cors(replay)['access-control-allow-origin']).toBe(SPA_ORIGIN)
  })

  it('keeps a code single-use under parallel exchanges from an allowed origin', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HOST, {
      clientId: SPA,
      redirectUri: SPA_REDIRECT,
      challenge,
    })
    const body = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: SPA_REDIRECT,
      code_verifier: verifier,
      client_id: SPA,
    }
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post('/token', body, { origin: SPA_ORIGIN })),
    )
    expect(answers.map((res) => res.status).sort()).toEqual([200, ...Array<number>(7).fill(400)])
    for (const res of answers) expect(cors(res)['access-control-allow-origin']).toBe(SPA_ORIGIN)
  })

  it('serves the well-known documents to an allowed origin, HEAD included', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await send(issuer.url, {
        method,
        path: '/.well-known/oauth-authorization-server',
        host: HOST,
        headers: { origin: EXTRA_ORIGIN },
      })
      expect(res.status).toBe(200)
      expect(cors(res)['access-control-allow-origin']).toBe(EXTRA_ORIGIN)
    }
  })

  it.each([
    ['an unlisted origin', 'https://evil.test'],
    ['the origin null', 'null'],
    ['another case', 'http://SPA.test:8081'],
    ['another port', 'http://spa.test:8082'],
    ['no port', 'http://spa.test'],
    ['another scheme', 'https://spa.test:8081'],
    ['a trailing slash', 'http://spa.test:8081/'],
    ['a path', 'http://spa.test:8081/callback'],
    ['a look-alike suffix', 'http://spa.test:8081.evil.test'],
    ["another tenant's origin", 'https://other-spa.test'],
    ['a private-use scheme', 'com.example.cors:'],
    ['a loopback redirect URI origin', 'http://127.0.0.1:8400'],
    ['a loopback origin on another port', 'http://127.0.0.1:8401'],
    ['a huge value', `https://${'a'.repeat(8000)}.test`],
    ['a wildcard', '*'],
  ])('gives %s no CORS headers, but Vary: Origin', async (_name, origin) => {
    for (const [path, method] of PATHS) {
      const pre = await preflight(path, origin, method)
      expect(pre.status).toBe(204)
      expect(pre.headers.vary).toBe('Origin')
      expect(cors(pre)).toEqual({})
    }
    const res = await post('/token', { grant_type: 'password' }, { origin })
    expect(res.status).toBe(400)
    expect(res.headers.vary).toBe('Origin')
    expect(cors(res)).toEqual({})
    const jwks = await send(issuer.url, {
      path: '/.well-known/jwks.json',
      host: HOST,
      headers: { origin },
    })
    expect(jwks.status).toBe(200)
    expect(jwks.headers.vary).toBe('Origin')
    expect(cors(jwks)).toEqual({})
  })

  it('answers requests without Origin with no CORS headers, varying by Origin', async () => {
    const res = await send(issuer.url, { path: '/.well-known/jwks.json', host: HOST })
    expect(res.status).toBe(200)
    expect(res.headers.vary).toBe('Origin')
    expect(cors(res)).toEqual({})
  })

  it('never answers CORS on /introspect, even for an allowed origin', async () => {
    const pre = await preflight('/introspect', SPA_ORIGIN)
    expect(pre.status).toBe(405)
    expect(pre.headers.allow).toBe('POST')
    expect(cors(pre)).toEqual({})
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: HOST,
      headers: {
        origin: SPA_ORIGIN,
        authorization: basicAuth(API, API_SECRET),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'token=nope',
    })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ active: false })
    expect(cors(res)).toEqual({})
  })

  it('gives the login page and unknown hosts no CORS headers', async () => {
    const authorize = await preflight('/authorize', SPA_ORIGIN, 'GET')
    expect(authorize.status).toBe(405)
    expect(cors(authorize)).toEqual({})
    const unknown = await preflight('/token', SPA_ORIGIN, 'POST', 'nobody.test')
    expect(unknown.status).toBe(404)
    expect(unknown.json).toEqual({
      error: 'invalid_request',
      error_description: 'no tenant is served at this host',
    })
    expect(cors(unknown)).toEqual({})
  })

  it("does not open a tenant's endpoints to another tenant's origins", async () => {
    const res = await preflight('/token', SPA_ORIGIN, 'POST', 'other.cors.test')
    expect(res.status).toBe(204)
    expect(cors(res)).toEqual({})
    const own = await preflight('/token', 'https://other-spa.test', 'POST', 'other.cors.test')
    expect(cors(own)['access-control-allow-origin']).toBe('https://other-spa.test')
  })

  it('answers no CORS on the admin listener', async () => {
    const res = await request(issuer.issuer.adminApp.callback())
      .options('/metrics')
      .set('Origin', SPA_ORIGIN)
      .set('Access-Control-Request-Method', 'GET')
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const metrics = await request(issuer.issuer.adminApp.callback())
      .get('/metrics')
      .set('Origin', SPA_ORIGIN)
    expect(metrics.status).toBe(200)
    expect(metrics.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('follows a reload: a new origin is answered, a removed one no longer', async () => {
    const added = 'https://new.cors.test'
    const before = readFileSync(config, 'utf8')
    writeFileSync(
      config,
      before.replace(`allowed_origins: [${EXTRA_ORIGIN}]`, `allowed_origins: [${added}]`),
    )
    try {
      await expect(issuer.issuer.reload()).resolves.toBe(true)
      expect(cors(await preflight('/token', added))['access-control-allow-origin']).toBe(added)
      expect(cors(await preflight('/token', EXTRA_ORIGIN))).toEqual({})
    } finally {
      writeFileSync(config, before)
      await issuer.issuer.reload()
    }
    expect(cors(await preflight('/token', EXTRA_ORIGIN))['access-control-allow-origin']).toBe(
      EXTRA_ORIGIN,
    )
  })

  it('keeps the running origins when a reload brings a bad allowed_origins entry', async () => {
    const before = readFileSync(config, 'utf8')
    writeFileSync(
      config,
      before.replace(`allowed_origins: [${EXTRA_ORIGIN}]`, `allowed_origins: ['*']`),
    )
    try {
      await expect(issuer.issuer.reload()).resolves.toBe(false)
      expect(issuer.logs.join('\n')).toContain(
        'config.clients.0.allowed_origins.0: must be one origin: wildcards are not allowed',
      )
      const res = await preflight('/token', EXTRA_ORIGIN)
      expect(cors(res)['access-control-allow-origin']).toBe(EXTRA_ORIGIN)
      expect(cors(await preflight('/token', 'https://evil.test'))).toEqual({})
    } finally {
      writeFileSync(config, before)
      await issuer.issuer.reload()
    }
  })
})

describe('CORS for the acme example', () => {
  it('answers its single-page app at http://localhost:8081, the origin of its redirect URI', async () => {
    const tmp = tempDir()
    const examples = fileURLToPath(new URL('../../../../examples/', import.meta.url))
    const issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      config: examples,
    })
    try {
      const res = await send(issuer.url, {
        method: 'OPTIONS',
        path: '/token',
        host: 'acme.localhost:3000',
        headers: { origin: 'http://localhost:8081', 'access-control-request-method': 'POST' },
      })
      expect(res.status).toBe(204)
      expect(cors(res)['access-control-allow-origin']).toBe('http://localhost:8081')
      // globex's app is at :8082; acme does not answer it.
      const other = await send(issuer.url, {
        method: 'OPTIONS',
        path: '/token',
        host: 'acme.localhost:3000',
        headers: { origin: 'http://localhost:8082', 'access-control-request-method': 'POST' },
      })
      expect(cors(other)).toEqual({})
    } finally {
      await issuer.close()
      tmp.remove()
    }
  })
})
