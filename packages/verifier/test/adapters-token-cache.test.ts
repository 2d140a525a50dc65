import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier, VerifierError } from '../src/index.js'
import type { Verifier, VerifierOptions } from '../src/index.js'
import { AUDIENCE, buildAttacks } from './support/attacks.js'
import type { Attack } from './support/attacks.js'
import { claims, createTestKey, SECRET, signHs256, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'
import { expressServer, fetchServer, get, koaServer } from './support/servers.js'
import type { Received, TestServer } from './support/servers.js'

// The adapters answer a token cache hit without waiting for the verifier, and look a token up
// before checking its b64token shape: these tests hold them to what they answer without the
// cache (test/adapters.test.ts).

const ADAPTERS = { koa: koaServer, express: expressServer, fetch: fetchServer }
const HOUR = 3_600_000

let key: TestKey
let rotated: TestKey
let jwks: JwksServer
let attacks: Attack[]
const clock = { now: Date.UTC(2026, 10, 22, 8) }
const started: TestServer[] = []

beforeAll(async () => {
  ;[key, rotated] = await Promise.all([createTestKey('2026-11-22'), createTestKey('2026-11-23')])
  jwks = await startJwksServer([key.jwk])
  ;({ attacks } = await buildAttacks(
    jwks.issuer,
    key,
    Math.floor(clock.now / 1000),
    `${jwks.issuer}/elsewhere`,
  ))
})
afterAll(async () => {
  await Promise.all(started.map((server) => server.close()))
  await jwks.close()
})

/** A verifier with the token cache, on the shared clock, and the three adapters over it. */
async function setup(options: Partial<VerifierOptions> = {}) {
  const verifier = createVerifier({
    issuer: jwks.issuer,
    audience: AUDIENCE,
    secret: SECRET,
    now: () => clock.now,
    tokenCache: { max: 100 },
    ...options,
  })
  const servers = await Promise.all(Object.values(ADAPTERS).map((start) => start(verifier)))
  started.push(...servers)
  // One adapter after the other, so that which request fills the cache is known: the first.
  const call = async (authorization?: string): Promise<Received[]> => {
    const received: Received[] = []
    for (const server of servers) {
      received.push(
        await get(`${server.url}/orders`, authorization === undefined ? {} : { authorization }),
      )
    }
    return received
  }
  return { verifier, call }
}

function view(received: Received) {
  return {
    status: received.status,
    'www-authenticate': received.headers['www-authenticate'],
    body: received.body,
  }
}

/** One answer, after checking that all three adapters gave it. */
function same(all: Received[]) {
  const [first, ...others] = all.map(view)
  for (const other of others) expect(other).toEqual(first)
  return first!
}

const nowSeconds = () => Math.floor(clock.now / 1000)

describe('adapters with the token cache (Koa, Express, fetch)', () => {
  it('answer a repeated token from the cache exactly as the first time', async () => {
    const { verifier, call } = await setup()
    const rs = await signRs256(key, claims(jwks.issuer, nowSeconds()))
    const hs = await signHs256(claims(jwks.issuer, nowSeconds(), { sub: 'user-hs' }))
    for (const [token, sub] of [
      [rs, 'user-1'],
      [hs, 'user-hs'],
    ] as const) {
      const first = same(await call(`Bearer ${token}`))
      const again = same(await call(`bearer   ${token}`))
      expect(first).toMatchObject({ status: 200 })
      expect(JSON.parse(first.body)).toEqual({ sub, scopes: ['read', 'write'] })
      expect(again).toEqual(first)
    }
    // Each token was verified once, by the first adapter; its five other requests were hits.
    const stats = verifier.stats()
    expect(stats.accepted).toEqual({ HS256: 6, RS256: 6 })
    expect(stats.tokenCacheHits).toBe(10)
    expect(stats.rejected).toEqual({})
  })

  it('refuse every attack token as without the cache, next to a cached valid token', async () => {
    const { verifier, call } = await setup()
    const valid = await signRs256(key, claims(jwks.issuer, nowSeconds()))
    await call(`Bearer ${valid}`)
    const warmHits = verifier.stats().tokenCacheHits
    for (const attack of attacks) {
      const response = same(await call(`Bearer ${attack.token}`))
      expect(response.status, attack.name).toBe(attack.httpStatus ?? 401)
      const error = attack.httpStatus === 400 ? 'invalid_request' : 'invalid_token'
      expect(JSON.parse(response.body), attack.name).toMatchObject({ error })
      if (attack.httpStatus === undefined) {
        const refused = await verifier.verify(attack.token).catch((e: unknown) => e)
        expect(refused, attack.name).toBeInstanceOf(VerifierError)
        expect((refused as VerifierError).code, attack.name).toBe(attack.code)
      }
    }
    // No attack token was ever answered from the cache.
    expect(verifier.stats().tokenCacheHits).toBe(warmHits)
    expect(jwks.otherHits).toBe(0)
  })

  it.each([
    ['an empty token', 'Bearer'],
    ['extra parts', 'Bearer abc def'],
    ['characters outside b64token', 'Bearer abc*def'],
    ['a padded token', 'Bearer abc.def.ghi=='],
  ])('answer %s as without the cache, with the same counters', async (_, header) => {
    const { verifier, call } = await setup()
    const plain = await setup({ tokenCache: undefined })
    const expected = same(await plain.call(header))
    expect(same(await call(header))).toEqual(expected)
    expect(verifier.stats()).toEqual(plain.verifier.stats())
  })

  it('keep exp and its clock tolerance on a repeated token as on a new one', async () => {
    const { verifier, call } = await setup()
    const exp = nowSeconds() + 60
    const token = await signRs256(key, claims(jwks.issuer, nowSeconds(), { exp }))
    const saved = clock.now
    try {
      expect(same(await call(`Bearer ${token}`)).status).toBe(200)
      expect(same(await call(`Bearer ${token}`)).status).toBe(200)
      // Past exp, within the 5 s tolerance: still accepted, as a new token would be.
      clock.now = exp * 1000 + 4_999
      expect(same(await call(`Bearer ${token}`)).status).toBe(200)
      expect(same(await call(`Bearer ${token}`)).status).toBe(200)
      clock.now = exp * 1000 + 5_000
      const expired = same(await call(`Bearer ${token}`))
      expect(expired.status).toBe(401)
      expect(JSON.parse(expired.body)).toEqual({
        error: 'invalid_token',
        error_description: 'The token has expired',
      })
      // Two hits in the first round, three in the second; none past exp.
      expect(verifier.stats().tokenCacheHits).toBe(5)
      expect(verifier.stats().rejected).toEqual({ ERR_TOKEN_EXPIRED: 3 })
    } finally {
      clock.now = saved
    }
  })

  it('stop answering a repeated token once its key leaves the JWKS', async () => {
    const { call } = await setup()
    const token = await signRs256(
      key,
      claims(jwks.issuer, nowSeconds(), { exp: nowSeconds() + 3 * 3600 }),
    )
    const saved = clock.now
    try {
      expect(same(await call(`Bearer ${token}`)).status).toBe(200)
      jwks.keys = [rotated.jwk]
      clock.now += HOUR + 1
      const refused = same(await call(`Bearer ${token}`))
      expect(refused.status).toBe(401)
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_token' })
    } finally {
      jwks.keys = [key.jwk]
      clock.now = saved
    }
  })

  it('work with a verifier that createVerifier did not make', async () => {
    const inner = createVerifier({ issuer: jwks.issuer, secret: SECRET, now: () => clock.now })
    const wrapped: Verifier = {
      issuers: inner.issuers,
      stats: () => inner.stats(),
      verify: (token) => inner.verify(token),
    }
    const servers = await Promise.all(Object.values(ADAPTERS).map((start) => start(wrapped)))
    started.push(...servers)
    const hs = await signHs256(claims(jwks.issuer, nowSeconds()))
    for (const server of servers) {
      expect((await get(`${server.url}/orders`, { authorization: `Bearer ${hs}` })).status).toBe(
        200,
      )
      expect((await get(`${server.url}/orders`, { authorization: 'Bearer a*b' })).status).toBe(400)
    }
    expect(inner.stats().accepted.HS256).toBe(3)
    expect(inner.stats().rejected).toEqual({})
  })
})
