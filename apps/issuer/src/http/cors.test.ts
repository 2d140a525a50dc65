import type { Client, Tenant } from '@tessera/config-schema'
import Koa from 'koa'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import type { TenantRegistry, TenantRuntime } from '../tenants/runtime.js'
import { corsOrigins } from './cors.js'
import { errorHandler } from './errors.js'
import { HttpError } from './http-error.js'
import { createRouter } from './router.js'

function client(fields: Partial<Client>): Client {
  return {
    clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
    grantTypes: ['authorization_code'],
    redirectUris: [],
    postLogoutRedirectUris: [],
    scopes: [],
    introspection: 'own',
    ...fields,
  }
}

function tenant(clients: Client[]): Tenant {
  return {
    name: 'acme',
    hosts: ['acme.test'],
    jwtAlgorithm: 'HS256',
    providers: [],
    clients,
    source: { file: 'acme.yaml', line: 1 },
  }
}

describe('corsOrigins', () => {
  it('takes the origin of every http(s) redirect URI and every allowed origin', () => {
    const origins = corsOrigins(
      tenant([
        client({
          redirectUris: ['https://App.Acme.TEST:443/cb?x=1', 'http://localhost:8081/callback'],
          postLogoutRedirectUris: [],
          allowedOrigins: ['https://admin.acme.test'],
        }),
        client({
          redirectUris: ['https://xn--bcher-kva.test/cb', 'https://bücher.test/cb'],
          postLogoutRedirectUris: [],
          allowedOrigins: ['https://admin.acme.test', 'http://[::1]:5173'],
        }),
      ]),
    )
    expect([...origins].sort()).toEqual([
      'http://[::1]:5173',
      'http://localhost:8081',
      'https://admin.acme.test',
      'https://app.acme.test',
      'https://xn--bcher-kva.test',
    ])
  })

  it('takes nothing from private-use schemes or loopback redirect URIs, whatever their port', () => {
    const origins = corsOrigins(
      tenant([
        client({
          redirectUris: [
            'com.example.app:/oauth2redirect',
            'http://127.0.0.1/callback',
            'http://127.0.0.1:8400/fixed',
            'http://[::1]/callback',
            'http://[::1]:8400?x=1',
            'http://127.0.0.1',
          ],
          allowedOrigins: ['http://127.0.0.1:5173'],
        }),
        // Not loopback for RFC 8252: a name, matched exactly like any host.
        client({ redirectUris: ['http://localhost:8400/cb', 'http://127.0.0.1.nip.test/cb'] }),
      ]),
    )
    expect([...origins].sort()).toEqual([
      'http://127.0.0.1.nip.test',
      'http://127.0.0.1:5173',
      'http://localhost:8400',
    ])
  })

  it('is empty for a tenant without browser clients', () => {
    expect(corsOrigins(tenant([client({ grantTypes: ['password'] })])).size).toBe(0)
  })
})

// The router with CORS on /token and /.well-known/jwks.json, not on /introspect.
const runtime = {
  tenant: { name: 'acme' },
  corsOrigins: new Set(['https://app.acme.test', 'http://localhost:8081']),
} as unknown as TenantRuntime
const registry: TenantRegistry = {
  byHost: (host) => (host.split(':')[0] === 'acme.test' ? runtime : undefined),
  all: () => [runtime],
}

function app(): Koa {
  const koa = new Koa()
  koa.silent = true
  koa.use(errorHandler({ error: () => undefined } as never))
  koa.use(
    createRouter({
      registry,
      operational: {},
      tenant: {
        '/token': {
          POST: (ctx) => {
            if (ctx.get('X-Fail') === 'basic') {
              throw new HttpError(401, 'invalid_client', 'bad', {
                'WWW-Authenticate': 'Basic realm="tessera"',
              })
            }
            ctx.body = { route: 'token' }
          },
        },
        '/introspect': { POST: (ctx) => void (ctx.body = { route: 'introspect' }) },
        '/.well-known/jwks.json': { GET: (ctx) => void (ctx.body = { keys: [] }) },
      },
      cors: ['/token', '/.well-known/jwks.json'],
    }),
  )
  return koa
}

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-expose-headers',
  'access-control-allow-credentials',
]

function corsHeadersOf(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(CORS_HEADERS.filter((h) => h in headers).map((h) => [h, headers[h]!]))
}

describe('CORS on the router', () => {
  const server = app().callback()

  it('answers a preflight from an allowed origin with 204 and the path methods', async () => {
    const res = await request(server)
      .options('/token')
      .set('Host', 'acme.test')
      .set('Origin', 'https://app.acme.test')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type')
    expect(res.status).toBe(204)
    expect(res.headers.vary).toBe('Origin')
    expect(res.headers.allow).toBe('POST, OPTIONS')
    expect(corsHeadersOf(res.headers)).toEqual({
      'access-control-allow-origin': 'https://app.acme.test',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Authorization, Content-Type, DPoP',
      'access-control-max-age': '600',
    })
    const jwks = await request(server)
      .options('/.well-known/JWKS.json/')
      .set('Host', 'acme.test:8443')
      .set('Origin', 'http://localhost:8081')
      .set('Access-Control-Request-Method', 'GET')
    expect(jwks.status).toBe(204)
    expect(jwks.headers['access-control-allow-methods']).toBe('GET, HEAD')
    expect(jwks.headers['access-control-allow-origin']).toBe('http://localhost:8081')
  })

  it('gives an allowed origin its own origin back on the actual response, errors included', async () => {
    const ok = await request(server)
      .post('/token')
      .set('Host', 'acme.test')
      .set('Origin', 'http://localhost:8081')
    expect(ok.status).toBe(200)
    expect(ok.headers.vary).toBe('Origin')
    expect(corsHeadersOf(ok.headers)).toEqual({
      'access-control-allow-origin': 'http://localhost:8081',
      'access-control-expose-headers': 'WWW-Authenticate, Retry-After, DPoP-Nonce',
    })
    const failed = await request(server)
      .post('/token')
      .set('Host', 'acme.test')
      .set('Origin', 'https://app.acme.test')
      .set('X-Fail', 'basic')
    expect(failed.status).toBe(401)
    expect(failed.headers['www-authenticate']).toBe('Basic realm="tessera"')
    expect(failed.headers['access-control-allow-origin']).toBe('https://app.acme.test')
    expect(failed.headers.vary).toBe('Origin')
    // Another method on a CORS path: the 405 is readable by the app too, and lists OPTIONS.
    const wrong = await request(server)
      .get('/token')
      .set('Host', 'acme.test')
      .set('Origin', 'https://app.acme.test')
    expect(wrong.status).toBe(405)
    expect(wrong.headers.allow).toBe('POST, OPTIONS')
    expect(wrong.headers['access-control-allow-origin']).toBe('https://app.acme.test')
  })

  it.each([
    ['an unlisted origin', 'https://evil.test'],
    ['null', 'null'],
    ['another case', 'https://APP.acme.test'],
    ['another port', 'https://app.acme.test:8443'],
    ['another scheme', 'http://app.acme.test'],
    ['a trailing slash', 'https://app.acme.test/'],
    ['a default port written out', 'https://app.acme.test:443'],
    ['two origins', 'https://app.acme.test, http://localhost:8081'],
    ['a wildcard', '*'],
    ['a suffix', 'https://app.acme.test.evil.test'],
  ])('gives %s no CORS headers but still varies by Origin', async (_name, origin) => {
    const preflight = await request(server)
      .options('/token')
      .set('Host', 'acme.test')
      .set('Origin', origin)
      .set('Access-Control-Request-Method', 'POST')
    expect(preflight.status).toBe(204)
    expect(preflight.headers.vary).toBe('Origin')
    expect(corsHeadersOf(preflight.headers)).toEqual({})
    const actual = await request(server)
      .post('/token')
      .set('Host', 'acme.test')
      .set('Origin', origin)
    expect(actual.status).toBe(200)
    expect(actual.headers.vary).toBe('Origin')
    expect(corsHeadersOf(actual.headers)).toEqual({})
  })

  it('answers requests without Origin as before, with Vary: Origin, and plain OPTIONS with Allow', async () => {
    const res = await request(server).post('/token').set('Host', 'acme.test')
    expect(res.status).toBe(200)
    expect(res.headers.vary).toBe('Origin')
    expect(corsHeadersOf(res.headers)).toEqual({})
    const options = await request(server).options('/token').set('Host', 'acme.test')
    expect(options.status).toBe(204)
    expect(options.headers.allow).toBe('POST, OPTIONS')
    expect(corsHeadersOf(options.headers)).toEqual({})
  })

  it('never answers CORS on a path not listed, preflight or not', async () => {
    const preflight = await request(server)
      .options('/introspect')
      .set('Host', 'acme.test')
      .set('Origin', 'https://app.acme.test')
      .set('Access-Control-Request-Method', 'POST')
    expect(preflight.status).toBe(405)
    expect(preflight.headers.allow).toBe('POST')
    expect(corsHeadersOf(preflight.headers)).toEqual({})
    const actual = await request(server)
      .post('/introspect')
      .set('Host', 'acme.test')
      .set('Origin', 'https://app.acme.test')
    expect(actual.status).toBe(200)
    expect(actual.headers.vary).toBeUndefined()
    expect(corsHeadersOf(actual.headers)).toEqual({})
  })

  it('gives an unknown host its 404 and no CORS headers', async () => {
    const res = await request(server)
      .options('/token')
      .set('Host', 'other.test')
      .set('Origin', 'https://app.acme.test')
      .set('Access-Control-Request-Method', 'POST')
    expect(res.status).toBe(404)
    expect(corsHeadersOf(res.headers)).toEqual({})
  })

  it('refuses a CORS path that is not a tenant path', () => {
    expect(() =>
      createRouter({ registry, operational: {}, tenant: {}, cors: ['/userinfo'] }),
    ).toThrow(new TypeError('cors: /userinfo is not a tenant path'))
  })
})
