import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertion,
  assertionGrant,
  ASSERTION_TYPE,
  clientKey,
  serveKeys,
  startJwksServer,
  writeConfig,
} from '../support/client-assertion.js'
import type { ClientKey, JwksServer } from '../support/client-assertion.js'
import { postForm, send } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const HOST = 'pkr.test'
const ISSUER = 'http://pkr.test'
const COOLDOWN_MS = 1500
const TIMEOUT_MS = 500

// One client per jwks_uri: the cache is per URI.
const CLIENTS = {
  rotate: 'b2b2b2b2-0000-4000-8000-000000000001',
  cold: 'b2b2b2b2-0000-4000-8000-000000000002',
  redirect: 'b2b2b2b2-0000-4000-8000-000000000003',
  big: 'b2b2b2b2-0000-4000-8000-000000000004',
  slow: 'b2b2b2b2-0000-4000-8000-000000000005',
  flaky: 'b2b2b2b2-0000-4000-8000-000000000006',
  private: 'b2b2b2b2-0000-4000-8000-000000000007',
} as const

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('private_key_jwt client authentication, keys from jwks_uri', () => {
  let issuer: InProcessIssuer
  let jwks: JwksServer
  let tmp: ReturnType<typeof tempDir>
  let k1: ClientKey
  let k2: ClientKey
  let k3: ClientKey
  let published: ClientKey[]
  let flakyUp = true

  beforeAll(async () => {
    ;[k1, k2, k3] = await Promise.all([
      clientKey('ES256', 'k1'),
      clientKey('RS256', 'k2'),
      clientKey('PS256', 'k3'),
    ])
    published = [k1]
    jwks = await startJwksServer()
    jwks.routes.set(
      '/rotate',
      serveKeys(() => published),
    )
    jwks.routes.set('/cold', (req, res) => {
      setTimeout(() => serveKeys(() => [k1])(req, res), 300)
    })
    jwks.routes.set('/redirect', (_req, res) => {
      res.writeHead(302, { location: `${jwks.url}/rotate` }).end()
    })
    jwks.routes.set('/big', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ keys: [k1.jwk], padding: 'x'.repeat(100_000) }))
    })
    jwks.routes.set('/slow', () => undefined)
    jwks.routes.set('/flaky', (req, res) => {
      if (flakyUp) serveKeys(() => [k1])(req, res)
      else res.writeHead(500).end()
    })
    jwks.routes.set('/private', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          keys: [
            { ...k1.jwk, d: 'c2VjcmV0' },
            { kty: 'oct', k: 'c2VjcmV0' },
          ],
        }),
      )
    })
    tmp = tempDir()
    const clients = Object.entries(CLIENTS)
      .map(
        ([path, id]) => `    - client_id: ${id}
      token_endpoint_auth_method: private_key_jwt
      jwks_uri: ${jwks.url}/${path}
      grant_types: [password]
      scopes: [read]`,
      )
      .join('\n')
    const config = writeConfig(
      tmp.dir,
      `name: pkr\nconfig:\n  hosts: [${HOST}]\n  providers: [providers/users.mjs]\n  clients:\n${clients}\n`,
    )
    issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      config,
      clientJwks: { cooldownMs: COOLDOWN_MS, timeoutMs: TIMEOUT_MS },
    })
  })
  afterAll(async () => {
    await issuer.close()
    await jwks.close()
    tmp.remove()
  })

  const signIn = async (key: ClientKey, clientId: string) =>
    postForm(issuer.url, HOST, assertionGrant(await assertion(key, clientId, ISSUER)))
  const hits = (path: string) => jwks.hits.get(path) ?? 0
  const unavailable = {
    status: 503,
    json: {
      error: 'temporarily_unavailable',
      error_description: "the client's keys (jwks_uri) could not be fetched; retry later",
    },
  }

  it('fetches the key set once, and again for a new kid after the cooldown only', async () => {
    expect((await signIn(k1, CLIENTS.rotate)).status).toBe(200)
    expect((await signIn(k1, CLIENTS.rotate)).status).toBe(200)
    expect(hits('/rotate')).toBe(1)
    // The client rotates to k2: its first assertion with k2 makes the server look again.
    published = [k2]
    await sleep(COOLDOWN_MS + 100)
    expect((await signIn(k2, CLIENTS.rotate)).status).toBe(200)
    expect(hits('/rotate')).toBe(2)
    // Within the cooldown an unknown kid costs no fetch, however many assertions carry one.
    for (const key of [k3, k3, k1]) {
      expect((await signIn(key, CLIENTS.rotate)).json).toMatchObject({
        error: 'invalid_client',
        error_description: 'no key of the client matches the client_assertion header (kid, alg)',
      })
    }
    expect(hits('/rotate')).toBe(2)
    expect((await signIn(k2, CLIENTS.rotate)).status).toBe(200)
  })

  it('shares one fetch among concurrent requests on a cold cache', async () => {
    // /introspect: client authentication alone, without ten password checks at once.
    const introspect = async () =>
      send(issuer.url, {
        method: 'POST',
        path: '/introspect',
        host: HOST,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: 'not-a-token',
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await assertion(k1, CLIENTS.cold, ISSUER),
        }).toString(),
      })
    const results = await Promise.all(Array.from({ length: 10 }, introspect))
    expect(results.map((res) => res.json)).toEqual(Array(10).fill({ active: false }))
    expect(hits('/cold')).toBe(1)
  })

  it('refuses a redirect, an oversized body, a slow answer and a set of private keys', async () => {
    const reasons: Record<string, string> = {
      redirect: 'redirect (302) refused',
      big: 'body over 65536 bytes',
      slow: `timed out after ${TIMEOUT_MS} ms`,
      private: 'the JWK Set holds no usable public key',
    }
    for (const [path, reason] of Object.entries(reasons)) {
      const started = Date.now()
      const res = await signIn(k1, CLIENTS[path as keyof typeof CLIENTS])
      expect(res, path).toMatchObject(unavailable)
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000)
      expect(issuer.logs.join('\n'), path).toContain(reason)
    }
    // The redirect was not followed.
    expect(hits('/rotate')).toBe(2)
    // Within the cooldown a failed URI is not asked again.
    expect(await signIn(k1, CLIENTS.redirect)).toMatchObject(unavailable)
    expect(hits('/redirect')).toBe(1)
  })

  it('keeps the last good keys when the jwks_uri starts failing', async () => {
    expect((await signIn(k1, CLIENTS.flaky)).status).toBe(200)
    flakyUp = false
    await sleep(COOLDOWN_MS + 100)
    // The unknown kid makes the server look again; the fetch fails; k1 still works.
    expect((await signIn(k2, CLIENTS.flaky)).status).toBe(401)
    expect(hits('/flaky')).toBe(2)
    expect((await signIn(k1, CLIENTS.flaky)).status).toBe(200)
    const logs = issuer.logs.join('\n')
    expect(logs).toContain('"reason":"status 500"')
    expect(logs).toContain('"keeping":"last good keys"')
  })
})
