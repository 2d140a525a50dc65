import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryReplayCache, createVerifier } from '../src/index.js'
import type { DpopOptions, Verifier, VerifierOptions } from '../src/index.js'
import { verifyRequest } from '../src/fetch.js'
import { AUDIENCE } from './support/attacks.js'
import { bound, callWithDpop, createDpopKey, createProof, dpopHeaders } from './support/dpop.js'
import type { DpopKey } from './support/dpop.js'
import { claims, createTestKey, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'
import { koaMetadataServer } from './support/metadata-servers.js'
import { expressServer, fetchServer, get, koaServer } from './support/servers.js'
import type { Received, TestServer } from './support/servers.js'

const ADAPTERS = { koa: koaServer, express: expressServer, fetch: fetchServer }
type AdapterName = keyof typeof ADAPTERS
const NAMES = Object.keys(ADAPTERS) as AdapterName[]
const ALGS = 'algs="ES256 RS256 PS256 EdDSA"'

let signer: TestKey
let jwks: JwksServer
let client: DpopKey
const started: TestServer[] = []

beforeAll(async () => {
  signer = await createTestKey('2026-11-28')
  jwks = await startJwksServer([signer.jwk])
  client = await createDpopKey('ES256')
})
afterAll(async () => {
  await Promise.all(started.map((server) => server.close()))
  await jwks.close()
})

const now = () => Math.floor(Date.now() / 1000)

function verifierWith(dpop: DpopOptions | undefined, more: Partial<VerifierOptions> = {}) {
  return createVerifier({ issuer: jwks.issuer, audience: AUDIENCE, dpop, ...more })
}

async function serve(name: AdapterName, verifier: Verifier): Promise<string> {
  const server = await ADAPTERS[name](verifier)
  started.push(server)
  return server.url
}

function accessToken(jkt: string | undefined, extra: Record<string, unknown> = {}) {
  const payload = claims(jwks.issuer, now(), extra)
  return signRs256(signer, jkt === undefined ? payload : bound(payload, jkt))
}

/** A GET of `url` with a token bound to the client key and a proof for `htu` (default `url`). */
async function withProof(url: string, htu = url, extra: Record<string, unknown> = {}) {
  const token = await accessToken(client.jkt, extra)
  if (htu === url) return callWithDpop(url, token, client)
  const proof = await createProof(client, { htm: 'GET', htu, accessToken: token })
  return get(url, dpopHeaders(token, proof))
}

function errorOf(received: Received): string | undefined {
  return (JSON.parse(received.body) as { error?: string }).error
}

describe('the dpop option: tokens and schemes', () => {
  it('refuses a bound token sent as Bearer with a DPoP invalid_token challenge', async () => {
    for (const name of NAMES) {
      const url = `${await serve(name, verifierWith({}))}/orders`
      const token = await accessToken(client.jkt)
      const received = await get(url, { authorization: `Bearer ${token}` })
      expect(received.status).toBe(401)
      expect(received.headers['www-authenticate']).toBe(
        `DPoP realm="api", error="invalid_token", error_description="The access token is DPoP-bound", ${ALGS}`,
      )
    }
  })

  it('keeps unbound tokens working as Bearer, without jkt', async () => {
    for (const name of NAMES) {
      const url = `${await serve(name, verifierWith({}))}/orders`
      const received = await get(url, { authorization: `Bearer ${await accessToken(undefined)}` })
      expect(received.status).toBe(200)
      expect(JSON.parse(received.body)).toEqual({ sub: 'user-1', scopes: ['read', 'write'] })
    }
  })

  it('refuses an unbound token sent as DPoP, and a cnf it cannot check', async () => {
    const url = `${await serve('koa', verifierWith({}))}/orders`
    const unbound = await accessToken(undefined)
    const proof = await createProof(client, { htm: 'GET', htu: url, accessToken: unbound })
    const received = await get(url, dpopHeaders(unbound, proof))
    expect(received.status).toBe(401)
    expect(received.headers['www-authenticate']).toMatch(/^DPoP realm="api", error="invalid_token"/)
    for (const cnf of [{ 'x5t#S256': 'abc' }, { jkt: 'short' }, 'jkt']) {
      const token = await signRs256(signer, { ...claims(jwks.issuer, now()), cnf })
      const answer = await get(url, { authorization: `Bearer ${token}` })
      expect(answer.status).toBe(401)
      expect(errorOf(answer)).toBe('invalid_token')
    }
  })

  it('answers a request without a token with a Bearer and a DPoP challenge', async () => {
    for (const name of NAMES) {
      const received = await get(`${await serve(name, verifierWith({}))}/orders`)
      expect(received.status).toBe(401)
      expect(received.headers['www-authenticate']).toBe(
        `Bearer realm="api", DPoP realm="api", ${ALGS}`,
      )
    }
  })

  it('names the resource metadata in both challenges', async () => {
    const verifier = verifierWith(
      {},
      { audience: 'https://mcp.example.test/mcp', resourceMetadata: { scopesSupported: ['read'] } },
    )
    const server = await koaMetadataServer(verifier)
    started.push(server)
    const metadata =
      'resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"'
    const received = await get(`${server.url}/mcp`)
    expect(received.headers['www-authenticate']).toBe(
      `Bearer realm="api", ${metadata}, DPoP realm="api", ${ALGS}, ${metadata}`,
    )
    const document = JSON.parse(
      (await get(`${server.url}/.well-known/oauth-protected-resource/mcp`)).body,
    ) as Record<string, unknown>
    expect(document.dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256', 'EdDSA'])
    expect(document).not.toHaveProperty('dpop_bound_access_tokens_required')
  })

  it('answers a bound token whose claims fail in the DPoP scheme', async () => {
    const url = `${await serve('express', verifierWith({}))}/orders`
    const received = await withProof(url, url, { exp: now() - 60 })
    expect(received.status).toBe(401)
    expect(received.headers['www-authenticate']).toMatch(
      /^DPoP realm="api", error="invalid_token", error_description="The token has expired", algs=/,
    )
  })

  it('answers a malformed DPoP Authorization header with 400 invalid_request', async () => {
    const url = `${await serve('koa', verifierWith({}))}/orders`
    for (const authorization of ['DPoP', 'DPoP a b', 'DPoP a"b']) {
      const received = await get(url, { authorization, dpop: 'x.y.z' })
      expect(received.status).toBe(400)
      expect(received.headers['www-authenticate']).toMatch(
        /^DPoP realm="api", error="invalid_request"/,
      )
    }
  })

  it('answers a missing scope of a bound token with a DPoP insufficient_scope challenge', async () => {
    for (const name of NAMES) {
      const url = `${await serve(name, verifierWith({}))}/admin`
      const received = await withProof(url)
      expect(received.status).toBe(403)
      expect(received.headers['www-authenticate']).toBe(
        `DPoP realm="api", error="insufficient_scope", error_description="The token lacks a required scope", scope="admin", ${ALGS}`,
      )
    }
  })

  it('without the option, reads Bearer only and does not look at cnf', async () => {
    const url = `${await serve('koa', verifierWith(undefined))}/orders`
    const token = await accessToken(client.jkt)
    expect((await get(url, { authorization: `DPoP ${token}` })).headers['www-authenticate']).toBe(
      'Bearer realm="api"',
    )
    expect((await get(url, { authorization: `Bearer ${token}` })).status).toBe(200)
  })
})

describe('the dpop option with the token cache', () => {
  it('checks a new proof on every request, also when the token is a cache hit', async () => {
    for (const name of NAMES) {
      const verifier = verifierWith({}, { tokenCache: { max: 100 } })
      const url = `${await serve(name, verifier)}/orders`
      const token = await accessToken(client.jkt)
      const proof = () => createProof(client, { htm: 'GET', htu: url, accessToken: token })
      const first = await proof()
      expect((await get(url, dpopHeaders(token, first))).status).toBe(200)
      expect((await get(url, dpopHeaders(token, await proof()))).status).toBe(200)
      expect(verifier.stats().tokenCacheHits).toBe(1)
      expect(errorOf(await get(url, dpopHeaders(token, first)))).toBe('invalid_dpop_proof')
      expect(errorOf(await get(url, { authorization: `DPoP ${token}` }))).toBe('invalid_dpop_proof')
      const asBearer = await get(url, { authorization: `Bearer ${token}` })
      expect(asBearer.status).toBe(401)
      expect(asBearer.headers['www-authenticate']).toMatch(
        /^DPoP realm="api", error="invalid_token"/,
      )
    }
  })
})

describe('dpop.required', () => {
  it('refuses every Bearer token and offers the DPoP challenge alone', async () => {
    for (const name of NAMES) {
      const url = `${await serve(name, verifierWith({ required: true }))}/orders`
      const unbound = await get(url, { authorization: `Bearer ${await accessToken(undefined)}` })
      expect(unbound.status).toBe(401)
      expect(unbound.headers['www-authenticate']).toBe(
        `DPoP realm="api", error="invalid_token", error_description="This API accepts DPoP-bound tokens only", ${ALGS}`,
      )
      expect((await get(url)).headers['www-authenticate']).toBe(`DPoP realm="api", ${ALGS}`)
      expect((await withProof(url)).status).toBe(200)
    }
  })

  it('says so in the resource metadata', async () => {
    const verifier = verifierWith(
      { required: true },
      { audience: 'https://mcp.example.test/mcp', resourceMetadata: {} },
    )
    const server = await koaMetadataServer(verifier)
    started.push(server)
    const document = JSON.parse(
      (await get(`${server.url}/.well-known/oauth-protected-resource`)).body,
    ) as Record<string, unknown>
    expect(document.dpop_bound_access_tokens_required).toBe(true)
  })
})

describe('dpop.publicUrl', () => {
  it('takes htu under the public origin and refuses the internal URL', async () => {
    for (const name of NAMES) {
      const verifier = verifierWith({ publicUrl: 'https://api.example.com' })
      const url = `${await serve(name, verifier)}/orders`
      expect((await withProof(url, 'https://api.example.com/orders')).status).toBe(200)
      expect((await withProof(url, 'https://API.example.com:443/orders?x=1')).status).toBe(200)
      for (const htu of [url, 'https://api.example.com/admin', 'http://api.example.com/orders']) {
        const received = await withProof(url, htu)
        expect(received.status).toBe(401)
        expect(errorOf(received)).toBe('invalid_dpop_proof')
      }
    }
  })
})

describe('the proof window', () => {
  it('is iat - clockTolerance to iat + maxAge + clockTolerance, to the millisecond', async () => {
    let at = 0
    const verifier = verifierWith({ maxAge: 10_000 }, { clockTolerance: 1, now: () => at })
    const url = `${await serve('koa', verifier)}/orders`
    const iat = now()
    const token = await accessToken(client.jkt, { iat: iat - 100 })
    const call = async (atMs: number) => {
      at = atMs
      const proof = await createProof(client, { htm: 'GET', htu: url, accessToken: token, iat })
      return (await get(url, dpopHeaders(token, proof))).status
    }
    expect(await call(iat * 1000 + 11_000 - 1)).toBe(200)
    expect(await call(iat * 1000 + 11_000)).toBe(401)
    expect(await call(iat * 1000 - 1_000)).toBe(200)
    expect(await call(iat * 1000 - 1_001)).toBe(401)
  })
})

describe('dpop.replayCache', () => {
  it('is called once per accepted proof, with expiresAt = iat + maxAge + clockTolerance', async () => {
    const calls: [string, number][] = []
    const replayCache = {
      add: (jti: string, expiresAt: number) => {
        calls.push([jti, expiresAt])
        return Promise.resolve(true)
      },
    }
    const verifier = verifierWith({ maxAge: 30_000, replayCache }, { clockTolerance: 2 })
    const url = `${await serve('koa', verifier)}/orders`
    const token = await accessToken(client.jkt)
    const iat = now() - 10
    const proof = await createProof(client, {
      htm: 'GET',
      htu: url,
      accessToken: token,
      iat,
      jti: 'j-1',
    })
    expect((await get(url, dpopHeaders(token, proof))).status).toBe(200)
    expect(calls).toEqual([['j-1', iat * 1000 + 30_000 + 2_000]])
    // A refused proof is never recorded.
    const late = await createProof(client, {
      htm: 'GET',
      htu: url,
      accessToken: token,
      iat: now() - 33,
    })
    expect((await get(url, dpopHeaders(token, late))).status).toBe(401)
    expect(calls).toHaveLength(1)
  })

  it('refuses a proof unless add resolves to true', async () => {
    for (const answer of [false, 'OK', 1, undefined]) {
      const verifier = verifierWith({
        replayCache: { add: () => Promise.resolve(answer as boolean) },
      })
      const received = await withProof(`${await serve('fetch', verifier)}/orders`)
      expect(received.status).toBe(401)
      expect(JSON.parse(received.body)).toEqual({
        error: 'invalid_dpop_proof',
        error_description: 'The DPoP proof was used before',
      })
    }
  })

  it('answers 503 with Retry-After when the cache fails, never 500', async () => {
    const failing = [
      () => Promise.reject(new Error('redis is down')),
      () => {
        throw new Error('sync failure')
      },
    ]
    for (const add of failing) {
      const url = `${await serve('express', verifierWith({ replayCache: { add } }))}/orders`
      const received = await withProof(url)
      expect(received.status).toBe(503)
      expect(received.headers['retry-after']).toBe('1')
      expect(errorOf(received)).toBe('temporarily_unavailable')
      expect(received.body).not.toContain('redis')
    }
  })

  it('a bounded memory cache refuses new proofs with 503 when full, rather than forget', async () => {
    const verifier = verifierWith({ replayCache: createMemoryReplayCache({ max: 2 }) })
    const url = `${await serve('koa', verifier)}/orders`
    expect((await withProof(url)).status).toBe(200)
    expect((await withProof(url)).status).toBe(200)
    const full = await withProof(url)
    expect(full.status).toBe(503)
    expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(60)
    expect(verifier.stats().rejected.ERR_REPLAY_CACHE_UNAVAILABLE).toBe(1)
  })
})

describe('the dpop option itself', () => {
  const refuse = (options: Partial<VerifierOptions>, message: string) =>
    expect(() => createVerifier({ issuer: 'https://issuer.test', ...options })).toThrow(
      new TypeError(message),
    )

  it('is checked at creation', () => {
    const origin = 'must be an origin: http(s)://host[:port], without path, query or fragment'
    for (const publicUrl of [
      'https://api.test/v1',
      'https://api.test?x',
      'ftp://api.test',
      'api.test',
    ]) {
      refuse({ dpop: { publicUrl } }, `createVerifier: options.dpop.publicUrl: ${origin}`)
    }
    refuse(
      { dpop: { maxAge: 999 } },
      'createVerifier: options.dpop.maxAge: Too small: expected number to be >=1000',
    )
    refuse(
      { dpop: { replayCache: {} as never } },
      'createVerifier: options.dpop.replayCache: must be an object with an add(jti, expiresAt) method',
    )
    refuse({ dpop: { nonce: true } as never }, 'createVerifier: options.dpop.nonce: not an option')
    refuse(
      {
        dpop: {},
        audience: 'https://r.test',
        resourceMetadata: { dpopBoundAccessTokensRequired: true },
      },
      'createVerifier: options.resourceMetadata.dpopBoundAccessTokensRequired: set from the dpop option; leave it out',
    )
    expect(() =>
      createVerifier({ issuer: 'https://i.test', dpop: { publicUrl: 'https://a.test/' } }),
    ).not.toThrow()
  })

  it('makes verifyRequest need the method and URL of the request', async () => {
    const verifier = verifierWith({})
    await expect(verifyRequest({ headers: new Headers() }, verifier)).rejects.toThrow(
      new TypeError('verifyRequest: a verifier with dpop needs the request method and url'),
    )
  })

  it('counts refused proofs', async () => {
    const verifier = verifierWith({})
    const url = `${await serve('koa', verifier)}/orders`
    await withProof(url, `${url}/other`)
    expect(verifier.stats().rejected.ERR_DPOP_PROOF_INVALID).toBe(1)
  })
})
