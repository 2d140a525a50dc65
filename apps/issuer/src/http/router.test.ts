import type { RouterContext } from '@koa/router'
import Koa from 'koa'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import type { TenantRegistry, TenantRuntime } from '../tenants/runtime.js'
import { errorHandler } from './errors.js'
import { createRouter } from './router.js'

// The issuer's routing: paths match case-insensitively with or without one trailing slash, GET
// also answers HEAD, a known path asked with another method is 405 with Allow, and an unknown
// host is 404 on every tenant path.
const runtime = { tenant: { name: 'acme' } } as TenantRuntime
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
      operational: {
        '/healthz': (ctx) => {
          ctx.body = { status: 'ok' }
        },
      },
      tenant: {
        '/token': {
          POST: (ctx) => {
            ctx.body = { route: 'token', tenant: ctx.state.tenant.tenant.name }
          },
        },
        '/authorize': {
          GET: (ctx) => {
            ctx.body = { route: 'authorize' }
          },
          POST: (ctx) => {
            ctx.body = { route: 'login' }
          },
        },
        '/.well-known/jwks.json': {
          GET: (ctx) => {
            ctx.body = { route: 'jwks' }
          },
        },
        '/revoke': {
          POST: (ctx) => {
            // The context @koa/router builds: the route as registered, whatever the request's case.
            const { routerPath, params } = ctx as typeof ctx & RouterContext
            ctx.body = { routerPath, params }
          },
        },
      },
    }),
  )
  return koa
}

describe('createRouter', () => {
  const server = app().callback()

  it('routes a tenant path on a tenant host, whatever the case or a trailing slash', async () => {
    for (const path of ['/token', '/TOKEN', '/Token/', '/token?x=1']) {
      const res = await request(server).post(path).set('Host', 'acme.test')
      expect(res.status, path).toBe(200)
      expect(res.body).toEqual({ route: 'token', tenant: 'acme' })
    }
    expect((await request(server).get('/authorize').set('Host', 'acme.test:8443')).body).toEqual({
      route: 'authorize',
    })
    expect((await request(server).post('/authorize').set('Host', 'acme.test')).body).toEqual({
      route: 'login',
    })
  })

  it('answers HEAD with the GET route', async () => {
    const res = await request(server).head('/.well-known/jwks.json').set('Host', 'acme.test')
    expect(res.status).toBe(200)
  })

  it('answers a known path asked with another method with 405 and Allow', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/token', 'POST'],
      ['HEAD', '/token', 'POST'],
      ['PUT', '/authorize', 'GET, HEAD, POST'],
      ['DELETE', '/.well-known/jwks.json/', 'GET, HEAD'],
      ['OPTIONS', '/Token', 'POST'],
    ]
    for (const [method, path, allow] of cases) {
      const verb = method.toLowerCase() as 'get'
      const res = await request(server)[verb](path).set('Host', 'acme.test')
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.allow).toBe(allow)
    }
  })

  it('answers anything else on a tenant host with 404', async () => {
    for (const path of ['/', '/nope', '//token', '/token//', '/token/x', '/%74oken']) {
      const res = await request(server).post(path).set('Host', 'acme.test')
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ error: 'invalid_request', error_description: 'not found' })
    }
  })

  it('answers every tenant path of an unknown host with the same 404', async () => {
    for (const [method, path] of [
      ['post', '/token'],
      ['get', '/authorize'],
      ['get', '/nope'],
      ['post', '/healthz'],
    ] as const) {
      const res = await request(server)[method](path).set('Host', 'other.test')
      expect(res.status).toBe(404)
      expect(res.body).toEqual({
        error: 'invalid_request',
        error_description: 'no tenant is served at this host',
      })
    }
  })

  it('serves the operational endpoints with GET or HEAD on any host, and only those', async () => {
    for (const host of ['acme.test', 'other.test']) {
      expect((await request(server).get('/healthz').set('Host', host)).body).toEqual({
        status: 'ok',
      })
      expect((await request(server).head('/HEALTHZ/').set('Host', host)).status).toBe(200)
    }
    // Another method reaches the tenant routes, which have no such path.
    expect((await request(server).post('/healthz').set('Host', 'acme.test')).status).toBe(404)
  })

  it('answers any method Node accepts on a known path with 405, and on another path with 404', async () => {
    for (const method of ['PROPFIND', 'PURGE', 'TRACE', 'MKCOL']) {
      const known = await request(server)
        .options('/token')
        .set('Host', 'acme.test')
        .use((req) => {
          req.method = method
        })
      expect(known.status, method).toBe(405)
      expect(known.headers.allow).toBe('POST')
    }
    const res = await request(server).options('/nope').set('Host', 'acme.test')
    expect(res.status).toBe(404)
  })

  it('runs a handler with the context @koa/router builds', async () => {
    const res = await request(server).post('/REVOKE/').set('Host', 'acme.test')
    expect(res.body).toEqual({ routerPath: '/revoke', params: {} })
  })
})
