import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createVerifier, renderError, VerifierError } from '../src/index.js'
import type { VerifierEvent, VerifierOptions } from '../src/index.js'
import { claims, createTestKey, rawToken, SECRET, signHs256, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'

const HOUR = 3_600_000
const START = Date.UTC(2026, 10, 22, 8)

let keyA: TestKey
let keyB: TestKey
let keyC: TestKey
beforeAll(async () => {
  ;[keyA, keyB, keyC] = await Promise.all([
    createTestKey('2026-11-22'),
    createTestKey('2026-11-23'),
    createTestKey('2026-11-24'),
  ])
})

const servers: JwksServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function server(keys: TestKey[]): Promise<JwksServer> {
  const started = await startJwksServer(keys.map((key) => key.jwk))
  servers.push(started)
  return started
}

/** A verifier of `jwks`'s issuer with an injected clock and an event log. */
function setup(jwks: JwksServer, options: Partial<VerifierOptions> = {}) {
  const clock = { now: START }
  const events: VerifierEvent[] = []
  const verifier = createVerifier({
    issuer: jwks.issuer,
    secret: SECRET,
    now: () => clock.now,
    onEvent: (event) => events.push(event),
    ...options,
  })
  const token = (key: TestKey, extra = {}) =>
    signRs256(key, claims(jwks.issuer, Math.floor(clock.now / 1000), extra))
  return { verifier, clock, events, token }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'accepted'
  } catch (error) {
    return error instanceof VerifierError ? error.code : `unexpected ${String(error)}`
  }
}

describe('JWKS cache', () => {
  it('fetches once and serves later tokens from the cache', async () => {
    const jwks = await server([keyA])
    const { verifier, token } = setup(jwks)
    for (let i = 0; i < 5; i += 1) await verifier.verify(await token(keyA))
    expect(jwks.hits).toBe(1)
    expect(verifier.stats()).toMatchObject({ jwksFetches: 1, accepted: { RS256: 5, HS256: 0 } })
  })

  it('never fetches while only HS256 tokens arrive', async () => {
    const jwks = await server([keyA])
    const { verifier, clock } = setup(jwks)
    for (let i = 0; i < 20; i += 1) {
      await verifier.verify(await signHs256(claims(jwks.issuer, Math.floor(clock.now / 1000))))
    }
    expect(jwks.hits).toBe(0)
    expect(verifier.stats().accepted).toEqual({ HS256: 20, RS256: 0 })
  })

  it('accepts a rotated kid after one refetch, shared by 200 concurrent requests', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token } = setup(jwks)
    await verifier.verify(await token(keyA))
    jwks.keys = [keyA.jwk, keyB.jwk]
    // Past the cooldown that the first fetch started.
    clock.now += 30_000
    const rotated = await token(keyB)
    const results = await Promise.all(
      Array.from({ length: 200 }, () => codeOf(verifier.verify(rotated))),
    )
    expect(new Set(results)).toEqual(new Set(['accepted']))
    expect(jwks.hits).toBe(2)
    expect(verifier.stats()).toMatchObject({ jwksFetches: 2, accepted: { RS256: 201 } })
  })

  it('fetches at most once per cooldown under a flood of 1,000 random unknown kids', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token, events } = setup(jwks, { timeout: 20_000 })
    await verifier.verify(await token(keyA))
    // Unknown kids are decided before any signature check: a fake signature keeps the flood
    // cheap to build, so that it is really concurrent.
    const flood = () => {
      const payload = claims(jwks.issuer, Math.floor(clock.now / 1000))
      const tokens = Array.from({ length: 1000 }, (_, i) =>
        rawToken({ alg: 'RS256', typ: 'JWT', kid: `random-${i}-${Math.random()}` }, payload),
      )
      return Promise.all(tokens.map((t) => codeOf(verifier.verify(t))))
    }
    clock.now += 30_000
    const first = await flood()
    expect(new Set(first)).toEqual(new Set(['ERR_KID_UNKNOWN']))
    expect(jwks.hits).toBe(2)
    clock.now += 10_000
    await flood()
    expect(jwks.hits).toBe(2)
    clock.now += 20_000
    await flood()
    expect(jwks.hits).toBe(3)
    expect(verifier.stats().unknownKids).toBe(3000)
    expect(events.filter((e) => e.type === 'kid_unknown' && e.refetch).length).toBeGreaterThan(0)
    // The known key kept working throughout.
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
  })

  it('refetches an unknown kid again only after the cooldown', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token } = setup(jwks, { cooldown: 30_000 })
    await verifier.verify(await token(keyA))
    clock.now += 30_000
    expect(await codeOf(verifier.verify(await token(keyB)))).toBe('ERR_KID_UNKNOWN')
    expect(jwks.hits).toBe(2)
    jwks.keys = [keyA.jwk, keyB.jwk]
    clock.now += 29_000
    expect(await codeOf(verifier.verify(await token(keyB)))).toBe('ERR_KID_UNKNOWN')
    expect(jwks.hits).toBe(2)
    clock.now += 1_000
    expect(await codeOf(verifier.verify(await token(keyB)))).toBe('accepted')
    expect(jwks.hits).toBe(3)
  })

  it('keeps serving a fresh cache while the issuer is down', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token } = setup(jwks)
    await verifier.verify(await token(keyA))
    jwks.mode = 'error'
    clock.now += HOUR / 2
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
    expect(jwks.hits).toBe(1)
    expect(verifier.stats().staleKeysServed).toBe(0)
  })

  it('serves stale keys within maxStale when the issuer is down, and says so', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token, events } = setup(jwks)
    await verifier.verify(await token(keyA))
    jwks.mode = 'refuse'
    clock.now += HOUR + 1
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
    clock.now += 23 * HOUR
    // After a failure, stale keys serve at once and the retry runs in the background.
    jwks.delay = 5_000
    const started = performance.now()
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
    expect(performance.now() - started).toBeLessThan(2_500)
    jwks.delay = 0
    await vi.waitFor(() => expect(jwks.hits).toBe(3))
    const stats = verifier.stats()
    expect(stats.staleKeysServed).toBe(2)
    expect(events.map((e) => e.type)).toContain('jwks_stale')
    expect(events.find((e) => e.type === 'jwks_fetch_failed')).toMatchObject({
      reason: 'request failed: UND_ERR_SOCKET: other side closed',
    })
  })

  it('answers 503 with Retry-After once the keys are older than cacheMaxAge + maxStale', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token } = setup(jwks)
    await verifier.verify(await token(keyA))
    jwks.mode = 'error'
    clock.now += HOUR + 24 * HOUR
    const error = await verifier.verify(await token(keyA)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(VerifierError)
    expect((error as VerifierError).code).toBe('ERR_JWKS_UNAVAILABLE')
    const response = renderError(error)
    expect(response.status).toBe(503)
    expect(response.headers['retry-after']).toBe('30')
    expect(response.headers['www-authenticate']).toBeUndefined()
    // Inside the cooldown no new fetch is tried, and Retry-After counts down.
    clock.now += 10_000
    const again = await verifier.verify(await token(keyA)).catch((e: unknown) => e)
    expect(renderError(again).headers['retry-after']).toBe('20')
    expect(jwks.hits).toBe(2)
    // Back up: after the cooldown the keys are fetched again.
    jwks.mode = 'ok'
    clock.now += 20_000
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
  })

  it('answers 503 on a cold start with the issuer down, while HS256 keeps working', async () => {
    const jwks = await server([keyA])
    jwks.mode = 'error'
    const { verifier, clock, token } = setup(jwks)
    expect(await codeOf(verifier.verify(await token(keyA)))).toBe('ERR_JWKS_UNAVAILABLE')
    const hs = await signHs256(claims(jwks.issuer, Math.floor(clock.now / 1000)))
    await expect(verifier.verify(hs)).resolves.toBeDefined()
    expect(jwks.hits).toBe(1)
  })

  it.each([
    ['a server that never answers', 'hang'],
    ['a body that never ends', 'hang-body'],
  ] as const)('gives up on %s after the timeout', async (_, mode) => {
    const jwks = await server([keyA])
    jwks.mode = mode
    const { verifier, token, events } = setup(jwks, { timeout: 200 })
    const started = performance.now()
    expect(await codeOf(verifier.verify(await token(keyA)))).toBe('ERR_JWKS_UNAVAILABLE')
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(events.find((e) => e.type === 'jwks_fetch_failed')).toMatchObject({
      reason: 'timed out after 200 ms',
    })
  })

  it('abandons an injected fetch that ignores the abort signal', async () => {
    const jwks = await server([keyA])
    const { verifier, token } = setup(jwks, {
      timeout: 100,
      fetch: () => new Promise<Response>(() => undefined),
    })
    expect(await codeOf(verifier.verify(await token(keyA)))).toBe('ERR_JWKS_UNAVAILABLE')
  })

  it.each([
    ['invalid JSON', 'invalid-json', 'body is not JSON'],
    ['a body over 64 KiB (Content-Length)', 'oversized', 'body over 65536 bytes'],
    ['a body over 64 KiB (streamed)', 'oversized-chunked', 'body over 65536 bytes'],
    ['a redirect', 'redirect', 'redirect (302) refused'],
    ['JSON that is not a JWK Set', 'not-a-set', 'not a JWK Set'],
  ] as const)('refuses %s and keeps the last good set', async (_, mode, reason) => {
    const jwks = await server([keyA])
    const { verifier, clock, token, events } = setup(jwks)
    await verifier.verify(await token(keyA))
    clock.now += 30_000
    jwks.mode = mode
    jwks.keys = [keyA.jwk, keyB.jwk]
    expect(await codeOf(verifier.verify(await token(keyB)))).toBe('ERR_JWKS_UNAVAILABLE')
    expect(events.find((e) => e.type === 'jwks_fetch_failed')).toMatchObject({ reason })
    expect(jwks.otherHits).toBe(0)
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
    clock.now += HOUR + 1
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
    expect(verifier.stats().staleKeysServed).toBe(1)
  })

  it('refuses the same documents on a cold start with 503', async () => {
    for (const mode of ['invalid-json', 'oversized', 'oversized-chunked', 'redirect'] as const) {
      const jwks = await server([keyA])
      jwks.mode = mode
      const { verifier, token } = setup(jwks)
      expect(await codeOf(verifier.verify(await token(keyA)))).toBe('ERR_JWKS_UNAVAILABLE')
      expect(jwks.otherHits).toBe(0)
    }
  })

  it('ignores oct keys, other key types, private members and duplicate kids', async () => {
    const jwks = await server([keyA])
    const duplicate = (await createTestKey('dup')).jwk
    jwks.keys = [
      { kty: 'oct', kid: 'oct-key', k: Buffer.from(SECRET).toString('base64url') },
      { kty: 'EC', kid: 'ec-key', crv: 'P-256', x: 'AAAA', y: 'AAAA' },
      { ...keyB.jwk, use: 'enc' },
      { ...keyC.jwk, alg: 'RS384' },
      { ...keyA.jwk, kid: 'dup' },
      duplicate,
      keyA.jwk,
    ]
    const { verifier, token, events } = setup(jwks)
    await expect(verifier.verify(await token(keyA))).resolves.toBeDefined()
    expect(events.find((e) => e.type === 'jwks_fetch')).toMatchObject({ keys: 1, ignored: 6 })
    expect(await codeOf(verifier.verify(await token({ ...keyA, kid: 'dup' })))).toBe(
      'ERR_KID_UNKNOWN',
    )
    expect(await codeOf(verifier.verify(await token({ ...keyB, kid: keyB.kid })))).toBe(
      'ERR_KID_UNKNOWN',
    )
  })

  it('treats a JWK Set whose keys are all unusable as a failure', async () => {
    const jwks = await server([])
    jwks.keys = [{ kty: 'oct', kid: 'oct-key', k: 'c2VjcmV0' }]
    const { verifier, token } = setup(jwks)
    expect(await codeOf(verifier.verify(await token(keyA)))).toBe('ERR_JWKS_UNAVAILABLE')
  })

  it('accepts an empty JWK Set (an issuer rolled back to HS256) as current', async () => {
    const jwks = await server([])
    const { verifier, token } = setup(jwks)
    expect(await codeOf(verifier.verify(await token(keyA)))).toBe('ERR_KID_UNKNOWN')
  })

  it('refreshes in the background before cacheMaxAge ends', async () => {
    const jwks = await server([keyA])
    const { verifier, clock, token, events } = setup(jwks)
    await verifier.verify(await token(keyA))
    clock.now += HOUR * 0.95
    jwks.delay = 3_000
    jwks.keys = [keyA.jwk, keyB.jwk]
    const started = performance.now()
    await verifier.verify(await token(keyA))
    // Answered from the cache, without waiting for the slow refresh it started.
    expect(performance.now() - started).toBeLessThan(2_000)
    await vi.waitFor(() => expect(events.filter((e) => e.type === 'jwks_fetch')).toHaveLength(2), {
      timeout: 15_000,
    })
    // The refreshed set is fresh for another hour and already knows the new key.
    clock.now += HOUR * 0.5
    const fetches = jwks.hits
    await expect(verifier.verify(await token(keyB))).resolves.toBeDefined()
    expect(jwks.hits).toBe(fetches)
  })

  it('keys the cache by (issuer, kid): a kid of another issuer never matches', async () => {
    const one = await server([keyA])
    const otherKey = await createTestKey(keyA.kid)
    const two = await server([otherKey])
    const clock = { now: START }
    const verifier = createVerifier({ issuer: [one.issuer, two.issuer], now: () => clock.now })
    const nowSeconds = Math.floor(START / 1000)
    await expect(
      verifier.verify(await signRs256(keyA, claims(one.issuer, nowSeconds))),
    ).resolves.toBeDefined()
    await expect(
      verifier.verify(await signRs256(otherKey, claims(two.issuer, nowSeconds))),
    ).resolves.toBeDefined()
    // Same kid, signed by issuer two's key, claiming issuer one.
    expect(
      await codeOf(verifier.verify(await signRs256(otherKey, claims(one.issuer, nowSeconds)))),
    ).toBe('ERR_TOKEN_INVALID')
  })

  it('takes the JWKS location from configuration, never from the token', async () => {
    const jwks = await server([keyA])
    const decoy = await server([keyB])
    const clock = { now: START }
    const verifier = createVerifier({
      issuer: 'https://issuer.example',
      jwksUri: jwks.url,
      now: () => clock.now,
    })
    const token = await signRs256(keyA, claims('https://issuer.example', Math.floor(START / 1000)))
    await expect(verifier.verify(token)).resolves.toBeDefined()
    expect(jwks.hits).toBe(1)
    expect(decoy.hits + decoy.otherHits).toBe(0)
  })

  it('looks globalThis.fetch up at fetch time', async () => {
    const jwks = await server([keyA])
    const { verifier, token } = setup(jwks)
    const original = globalThis.fetch
    const spy = vi.fn((url: string, init: RequestInit) => original(url, init))
    vi.stubGlobal('fetch', spy)
    try {
      await verifier.verify(await token(keyA))
    } finally {
      vi.unstubAllGlobals()
    }
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.calls[0]?.[1]).toMatchObject({ redirect: 'manual' })
  })
})

describe('token cache', () => {
  it('answers repeated tokens from the cache and counts them per algorithm', async () => {
    const jwks = await server([keyA])
    const { verifier, token, clock } = setup(jwks, { tokenCache: { max: 10 } })
    const rs = await token(keyA)
    const hs = await signHs256(claims(jwks.issuer, Math.floor(clock.now / 1000)))
    for (let i = 0; i < 3; i += 1) {
      await verifier.verify(rs)
      await verifier.verify(hs)
    }
    const stats = verifier.stats()
    expect(stats.tokenCacheHits).toBe(4)
    expect(stats.accepted).toEqual({ HS256: 3, RS256: 3 })
    const { payload } = await verifier.verify(rs)
    expect(Object.isFrozen(payload)).toBe(true)
  })

  it('ends an entry at exp', async () => {
    const jwks = await server([keyA])
    const { verifier, token, clock } = setup(jwks, { tokenCache: { max: 10 }, clockTolerance: 0 })
    const rs = await token(keyA, { exp: Math.floor(clock.now / 1000) + 60 })
    await verifier.verify(rs)
    clock.now += 60_000
    expect(await codeOf(verifier.verify(rs))).toBe('ERR_TOKEN_EXPIRED')
  })

  it('drops an entry when its key leaves the JWKS', async () => {
    const jwks = await server([keyA])
    const { verifier, token, clock } = setup(jwks, { tokenCache: { max: 10 } })
    const rs = await token(keyA, { exp: Math.floor(clock.now / 1000) + 3 * 3600 })
    await verifier.verify(rs)
    jwks.keys = [keyB.jwk]
    clock.now += HOUR + 1
    expect(await codeOf(verifier.verify(rs))).toBe('ERR_KID_UNKNOWN')
    expect(await codeOf(verifier.verify(rs))).toBe('ERR_KID_UNKNOWN')
  })

  it('stays within its bound', async () => {
    const jwks = await server([keyA])
    const { verifier, clock } = setup(jwks, { tokenCache: { max: 2 } })
    const nowSeconds = Math.floor(clock.now / 1000)
    const tokens = await Promise.all(
      [1, 2, 3].map((i) => signHs256(claims(jwks.issuer, nowSeconds, { jti: `t${i}` }))),
    )
    for (const t of tokens) await verifier.verify(t)
    await verifier.verify(tokens[0]!)
    expect(verifier.stats().tokenCacheHits).toBe(0)
    await verifier.verify(tokens[0]!)
    expect(verifier.stats().tokenCacheHits).toBe(1)
  })
})

describe('default fetch', () => {
  /** A port nothing listens on: the kernel picked it a moment ago and it was released. */
  async function closedPort(): Promise<number> {
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const { port } = probe.address() as AddressInfo
    await new Promise((resolve) => probe.close(resolve))
    return port
  }

  it('reaches an issuer under *.localhost by name, as curl and browsers do (RFC 6761)', async () => {
    const jwks = await server([keyA])
    const { port } = new URL(jwks.url)
    for (const issuer of [
      `http://keys.localhost:${port}`,
      `http://Tenant.Keys.LOCALHOST:${port}`,
    ]) {
      const { verifier, clock, events } = setup(jwks, { issuer })
      const token = await signRs256(keyA, claims(issuer, Math.floor(clock.now / 1000)))
      const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(token)))
      expect(results).toHaveLength(20)
      expect(events.filter((event) => event.type === 'jwks_fetch')).toHaveLength(1)
    }
    expect(jwks.hits).toBe(2)
  })

  it('leaves other hosts to globalThis.fetch as they are, and names localhost ones only', async () => {
    const jwks = await server([keyA])
    const { port } = new URL(jwks.url)
    const original = globalThis.fetch
    const spy = vi.fn((url: string, init: RequestInit) => original(url, init))
    vi.stubGlobal('fetch', spy)
    try {
      for (const issuer of [jwks.issuer, `http://localhost:${port}`]) {
        const { verifier, clock } = setup(jwks, { issuer })
        await verifier.verify(await signRs256(keyA, claims(issuer, Math.floor(clock.now / 1000))))
      }
    } finally {
      vi.unstubAllGlobals()
    }
    expect(spy).toHaveBeenCalledTimes(2)
    expect(spy.mock.calls[0]?.[1]).not.toHaveProperty('dispatcher')
    expect(spy.mock.calls[1]?.[1]).toHaveProperty('dispatcher')
  })

  it('says why a JWKS request failed: ECONNREFUSED with the address, ENOTFOUND with the name', async () => {
    const port = await closedPort()
    const refusedAt = `http://globex.localhost:${port}`
    const unknown = 'http://globex.localhost.invalid'
    const failures: string[] = []
    for (const issuer of [refusedAt, unknown]) {
      const events: VerifierEvent[] = []
      const verifier = createVerifier({ issuer, onEvent: (event) => events.push(event) })
      const token = await signRs256(keyA, claims(issuer, Math.floor(Date.now() / 1000)))
      expect(await codeOf(verifier.verify(token))).toBe('ERR_JWKS_UNAVAILABLE')
      for (const event of events)
        if (event.type === 'jwks_fetch_failed') failures.push(event.reason)
    }
    expect(failures).toEqual([
      `request failed: ECONNREFUSED 127.0.0.1:${port}`,
      'request failed: ENOTFOUND globex.localhost.invalid',
    ])
  })

  it('says why an injected fetch failed', async () => {
    const events: VerifierEvent[] = []
    const verifier = createVerifier({
      issuer: 'https://issuer.example',
      onEvent: (event) => events.push(event),
      fetch: () => Promise.reject(new Error('proxy said no\n  at somewhere')),
    })
    const token = await signRs256(
      keyA,
      claims('https://issuer.example', Math.floor(Date.now() / 1000)),
    )
    expect(await codeOf(verifier.verify(token))).toBe('ERR_JWKS_UNAVAILABLE')
    expect(events.find((event) => event.type === 'jwks_fetch_failed')).toMatchObject({
      reason: 'request failed: proxy said no at somewhere',
    })
  })
})
