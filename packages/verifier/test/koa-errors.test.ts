import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier } from '../src/index.js'
import { bearer } from '../src/koa.js'
import { claims, createTestKey, SECRET, signHs256, signRs256 } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'
import { get } from './support/servers.js'

// `bearer` answers a token-cache hit synchronously and a verification through a promise; on
// both paths an error thrown after it, by the route, must reach the app's error handling, never
// be answered as a token error (401), and a bad token must never reach the route.

let jwks: JwksServer
let server: Server
let url: string
const reached: string[] = []

beforeAll(async () => {
  const key = await createTestKey('2026-11-22')
  jwks = await startJwksServer([key.jwk])
  const verifier = createVerifier({ issuer: jwks.issuer, secret: SECRET, tokenCache: { max: 10 } })
  const app = new Koa()
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      ctx.status = 502
      ctx.body = { caught: (error as Error).message }
    }
  })
  app.use(bearer(verifier))
  app.use((ctx) => {
    reached.push(ctx.path)
    if (ctx.path === '/boom') throw new Error('route failed')
    ctx.body = { sub: (ctx.state as { auth: { payload: { sub: string } } }).auth.payload.sub }
  })
  server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  tokens.rs = await signRs256(key, claims(jwks.issuer, Math.floor(Date.now() / 1000)))
  tokens.hs = await signHs256(claims(jwks.issuer, Math.floor(Date.now() / 1000)))
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await jwks.close()
})

const tokens: { rs: string; hs: string } = { rs: '', hs: '' }

describe('Koa bearer and errors after it', () => {
  it.each(['rs', 'hs'] as const)(
    'lets a route error through, on a verification and on a cache hit (%s)',
    async (alg) => {
      const authorization = `Bearer ${tokens[alg]}`
      // The first call verifies (a promise), the second is a token-cache hit (no promise).
      for (let call = 0; call < 2; call++) {
        const received = await get(`${url}/boom`, { authorization })
        expect(received.status).toBe(502)
        expect(JSON.parse(received.body)).toEqual({ caught: 'route failed' })
        expect(received.headers['www-authenticate']).toBeUndefined()
      }
      const ok = await get(`${url}/fine`, { authorization })
      expect(ok.status).toBe(200)
      expect(JSON.parse(ok.body)).toEqual({ sub: 'user-1' })
    },
  )

  it('never runs the route for a refused token, on either path', async () => {
    reached.length = 0
    const forged = `${tokens.hs.slice(0, -4)}AAAA`
    for (const authorization of [`Bearer ${forged}`, 'Bearer not.a.token', 'Basic abc']) {
      const received = await get(`${url}/fine`, { authorization })
      expect(received.status).toBe(401)
      expect(received.headers['www-authenticate']).toMatch(/^Bearer realm="api"/)
    }
    expect(reached).toEqual([])
  })
})
