import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier } from '../src/index.js'
import type { Verifier } from '../src/index.js'
import { AUDIENCE, buildAttacks } from './support/attacks.js'
import type { Attack } from './support/attacks.js'
import { claims, createTestKey, SECRET, signHs256, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'
import { expressServer, fetchServer, get, koaServer } from './support/servers.js'
import type { Received, TestServer } from './support/servers.js'

const ADAPTERS = { koa: koaServer, express: expressServer, fetch: fetchServer }
type AdapterName = keyof typeof ADAPTERS

let key: TestKey
let jwks: JwksServer
let down: JwksServer
let verifier: Verifier
let attacks: Attack[]
let nowSeconds: number
const servers = new Map<string, TestServer>()

beforeAll(async () => {
  key = await createTestKey('2026-11-22')
  jwks = await startJwksServer([key.jwk])
  down = await startJwksServer([key.jwk])
  down.mode = 'error'
  // A frozen clock: the tolerance edges among the attacks must not drift while the suite runs.
  const frozen = Date.now()
  nowSeconds = Math.floor(frozen / 1000)
  verifier = createVerifier({
    issuer: [jwks.issuer, down.issuer],
    audience: AUDIENCE,
    secret: SECRET,
    now: () => frozen,
  })
  ;({ attacks } = await buildAttacks(jwks.issuer, key, nowSeconds, `${jwks.issuer}/elsewhere`))
  for (const [name, start] of Object.entries(ADAPTERS)) {
    servers.set(name, await start(verifier))
    servers.set(`${name}+realm`, await start(verifier, 'orders'))
  }
})
afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.close()))
  await jwks.close()
  await down.close()
})

/** What must be identical across adapters. */
function view(received: Received) {
  return {
    status: received.status,
    'www-authenticate': received.headers['www-authenticate'],
    'retry-after': received.headers['retry-after'],
    'cache-control': received.headers['cache-control'],
    'content-type': received.headers['content-type'],
    body: received.body,
  }
}

async function callAll(
  path: string,
  headers: Record<string, string>,
  suffix = '',
): Promise<Record<AdapterName, Received>> {
  const entries = await Promise.all(
    (Object.keys(ADAPTERS) as AdapterName[]).map(
      async (name) =>
        [name, await get(`${servers.get(name + suffix)!.url}${path}`, headers)] as const,
    ),
  )
  return Object.fromEntries(entries) as Record<AdapterName, Received>
}

async function same(path: string, headers: Record<string, string>, suffix = '') {
  const all = await callAll(path, headers, suffix)
  expect(view(all.express)).toEqual(view(all.koa))
  expect(view(all.fetch)).toEqual(view(all.koa))
  return view(all.koa)
}

describe('adapters (Koa, Express, fetch)', () => {
  it('answer every attack token identically: 401 invalid_token, never 500', async () => {
    for (const attack of attacks) {
      const response = await same('/orders', { authorization: `Bearer ${attack.token}` })
      const error = attack.httpStatus === 400 ? 'invalid_request' : 'invalid_token'
      expect(response.status, attack.name).toBe(attack.httpStatus ?? 401)
      expect(response['www-authenticate'], attack.name).toMatch(
        new RegExp(
          `^Bearer realm="api", error="${error}", error_description="[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]+"$`,
        ),
      )
      expect(JSON.parse(response.body), attack.name).toMatchObject({ error })
      expect(response.body).not.toMatch(/at .*\.(ts|js):\d+/)
    }
    expect(jwks.otherHits).toBe(0)
  })

  it('answer a request without a token with a bare challenge', async () => {
    const response = await same('/orders', {})
    expect(response).toEqual({
      status: 401,
      'www-authenticate': 'Bearer realm="api"',
      'retry-after': undefined,
      'cache-control': 'no-store',
      'content-type': 'application/json',
      body: '{"error_description":"A bearer token is required"}',
    })
  })

  it('treat another scheme as no token', async () => {
    const response = await same('/orders', { authorization: 'Basic dXNlcjpwYXNz' })
    expect(response.status).toBe(401)
    expect(response['www-authenticate']).toBe('Bearer realm="api"')
  })

  it.each([
    ['an empty token', 'Bearer'],
    ['only spaces after the scheme', 'Bearer    '],
    ['extra parts', 'Bearer abc def'],
    ['characters outside b64token', 'Bearer abc*def'],
    ['a comma list', 'Bearer abc, Basic xyz'],
  ])('answer 400 invalid_request to %s', async (_, authorization) => {
    const response = await same('/orders', { authorization })
    expect(response.status).toBe(400)
    expect(response['www-authenticate']).toMatch(/^Bearer realm="api", error="invalid_request", /)
  })

  it('accept a valid token of either algorithm, whatever the scheme case', async () => {
    const rs = await signRs256(key, claims(jwks.issuer, nowSeconds))
    const hs = await signHs256(claims(jwks.issuer, nowSeconds, { sub: 'user-hs' }))
    for (const [authorization, sub] of [
      [`Bearer ${rs}`, 'user-1'],
      [`bearer ${hs}`, 'user-hs'],
      [`BEARER  ${rs}`, 'user-1'],
    ] as const) {
      const all = await callAll('/orders', { authorization })
      for (const received of Object.values(all)) {
        expect(received.status).toBe(200)
        expect(JSON.parse(received.body)).toEqual({ sub, scopes: ['read', 'write'] })
      }
    }
  })

  it('answer a missing scope with 403 insufficient_scope naming it', async () => {
    const rs = await signRs256(key, claims(jwks.issuer, nowSeconds))
    const response = await same('/admin', { authorization: `Bearer ${rs}` })
    expect(response.status).toBe(403)
    expect(response['www-authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="The token lacks a required scope", scope="admin"',
    )
    expect(JSON.parse(response.body)).toEqual({
      error: 'insufficient_scope',
      error_description: 'The token lacks a required scope',
      scope: 'admin',
    })
  })

  it('use the configured realm, in the 403 of requireScope too', async () => {
    const rs = await signRs256(key, claims(jwks.issuer, nowSeconds))
    const missing = await same('/orders', {}, '+realm')
    expect(missing['www-authenticate']).toBe('Bearer realm="orders"')
    const forbidden = await same('/admin', { authorization: `Bearer ${rs}` }, '+realm')
    expect(forbidden['www-authenticate']).toMatch(
      /^Bearer realm="orders", error="insufficient_scope"/,
    )
  })

  it('answer 503 with Retry-After when the issuer keys are unavailable', async () => {
    const rs = await signRs256(key, claims(down.issuer, nowSeconds))
    const response = await same('/orders', { authorization: `Bearer ${rs}` })
    expect(response.status).toBe(503)
    expect(Number(response['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(response['www-authenticate']).toBeUndefined()
    expect(JSON.parse(response.body)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'The signing keys of the token issuer are unavailable',
    })
    // HS256 tokens of the same issuer keep working.
    const hs = await signHs256(claims(down.issuer, nowSeconds))
    const all = await callAll('/orders', { authorization: `Bearer ${hs}` })
    expect(Object.values(all).map((r) => r.status)).toEqual([200, 200, 200])
  })
})
