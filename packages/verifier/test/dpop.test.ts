import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier } from '../src/index.js'
import { AUDIENCE } from './support/attacks.js'
import { bound, createDpopKey, createProof, dpopHeaders, PROOF_ALGORITHMS } from './support/dpop.js'
import type { DpopKey, ProofInput } from './support/dpop.js'
import { claims, createTestKey, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'
import { expressServer, fetchServer, get, koaServer, send } from './support/servers.js'
import type { Received, TestServer } from './support/servers.js'

const ADAPTERS = { koa: koaServer, express: expressServer, fetch: fetchServer }
type AdapterName = keyof typeof ADAPTERS
const NAMES = Object.keys(ADAPTERS) as AdapterName[]
const ALGS = 'algs="ES256 RS256 PS256 EdDSA"'

let signer: TestKey
let jwks: JwksServer
let client: DpopKey
const servers = new Map<AdapterName, TestServer>()

beforeAll(async () => {
  signer = await createTestKey('2026-11-28')
  jwks = await startJwksServer([signer.jwk])
  client = await createDpopKey('ES256')
  const verifier = createVerifier({ issuer: jwks.issuer, audience: AUDIENCE, dpop: {} })
  for (const name of NAMES) servers.set(name, await ADAPTERS[name](verifier))
})
afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.close()))
  await jwks.close()
})

const now = () => Math.floor(Date.now() / 1000)
const urlOf = (name: AdapterName, path = '/orders') => `${servers.get(name)!.url}${path}`

/** An RS256 access token of the JWKS server's issuer, bound to `jkt` unless it is undefined. */
function accessToken(jkt: string | undefined, extra: Record<string, unknown> = {}) {
  const payload = claims(jwks.issuer, now(), extra)
  return signRs256(signer, jkt === undefined ? payload : bound(payload, jkt))
}

/** GET /orders of `name` with a token bound to `key` and a proof made from `change`. */
async function callWithProof(
  name: AdapterName,
  change: Partial<ProofInput> = {},
  key: DpopKey = client,
): Promise<Received> {
  const token = await accessToken(key.jkt)
  const proof = await createProof(key, {
    htm: 'GET',
    htu: urlOf(name),
    accessToken: token,
    ...change,
  })
  return get(urlOf(name), dpopHeaders(token, proof))
}

function expectProofRefused(received: Received, description?: RegExp) {
  expect(received.status).toBe(401)
  const challenge = received.headers['www-authenticate']!
  expect(challenge).toMatch(/^DPoP realm="api", error="invalid_dpop_proof", error_description="/)
  expect(challenge).toContain(ALGS)
  const body = JSON.parse(received.body) as { error: string; error_description: string }
  expect(body.error).toBe('invalid_dpop_proof')
  if (description !== undefined) expect(body.error_description).toMatch(description)
}

describe('DPoP-bound tokens with a valid proof', () => {
  for (const name of NAMES) {
    for (const alg of PROOF_ALGORITHMS) {
      it(`are accepted by ${name} with an ${alg} proof, the key's thumbprint in auth.jkt`, async () => {
        const key = await createDpopKey(alg)
        const received = await callWithProof(name, {}, key)
        expect(received.status, received.body).toBe(200)
        expect(JSON.parse(received.body)).toEqual({
          sub: 'user-1',
          scopes: ['read', 'write'],
          jkt: key.jkt,
        })
      })
    }
  }

  it('ignore the query and fragment of htu and of the request URL', async () => {
    for (const name of NAMES) {
      const token = await accessToken(client.jkt)
      const htu = `${urlOf(name)}?page=2#top`
      const proof = await createProof(client, { htm: 'GET', htu, accessToken: token })
      const received = await get(`${urlOf(name)}?page=3`, dpopHeaders(token, proof))
      expect(received.status, `${name}: ${received.body}`).toBe(200)
    }
  })

  it('compare htu after URL normalisation: scheme and host case, default port', async () => {
    const token = await accessToken(client.jkt)
    const upper = urlOf('koa').replace('http://', 'HTTP://')
    const proof = await createProof(client, { htm: 'GET', htu: upper, accessToken: token })
    expect((await get(urlOf('koa'), dpopHeaders(token, proof))).status).toBe(200)
  })

  it('take alg Ed25519, the fully specified name of EdDSA with an Ed25519 key', async () => {
    const key = await createDpopKey('EdDSA')
    for (const name of NAMES) {
      const received = await callWithProof(name, { header: { alg: 'Ed25519' } }, key)
      expect(received.status, received.body).toBe(200)
      expect((JSON.parse(received.body) as { jkt: string }).jkt).toBe(key.jkt)
    }
  })

  it('take the scheme name in any case', async () => {
    const token = await accessToken(client.jkt)
    const proof = await createProof(client, { htm: 'GET', htu: urlOf('koa'), accessToken: token })
    const received = await get(urlOf('koa'), { authorization: `dpop ${token}`, dpop: proof })
    expect(received.status).toBe(200)
  })
})

describe('DPoP proofs that are refused with 401 invalid_dpop_proof', () => {
  it('a missing DPoP header', async () => {
    for (const name of NAMES) {
      const token = await accessToken(client.jkt)
      expectProofRefused(await get(urlOf(name), { authorization: `DPoP ${token}` }), /required/)
    }
  })

  it('two DPoP headers, even both valid', async () => {
    for (const name of NAMES) {
      const token = await accessToken(client.jkt)
      const make = () => createProof(client, { htm: 'GET', htu: urlOf(name), accessToken: token })
      const received = await get(urlOf(name), {
        authorization: `DPoP ${token}`,
        dpop: [await make(), await make()],
      })
      expectProofRefused(received, /more than one/)
    }
  })

  it('a proof that is not a JWS, or too long', async () => {
    const token = await accessToken(client.jkt)
    for (const proof of ['not-a-jwt', 'a.b', `${'a'.repeat(9000)}.b.c`]) {
      expectProofRefused(await get(urlOf('koa'), dpopHeaders(token, proof)))
    }
  })

  it('a private key in the header', async () => {
    for (const name of NAMES) {
      const received = await callWithProof(name, { header: { jwk: client.privateJwk } })
      expectProofRefused(received, /public key/)
    }
  })

  it('a symmetric algorithm, with a symmetric or an asymmetric key in the header', async () => {
    const secret = new TextEncoder().encode('0123456789abcdef0123456789abcdef')
    const token = await accessToken(client.jkt)
    const base = { htm: 'GET', htu: urlOf('koa'), iat: now(), jti: 'x', ath: 'y' }
    for (const jwk of [{ kty: 'oct', k: Buffer.from(secret).toString('base64url') }, client.jwk]) {
      const proof = await new SignJWT(base)
        .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk })
        .sign(secret)
      expectProofRefused(await get(urlOf('koa'), dpopHeaders(token, proof)), /algorithm/)
    }
  })

  it('alg none and algorithms outside the list', async () => {
    const token = await accessToken(client.jkt)
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'dpop+jwt', jwk: client.jwk }))
    const payload = Buffer.from(JSON.stringify({ htm: 'GET', htu: urlOf('koa'), iat: now() }))
    const none = `${header.toString('base64url')}.${payload.toString('base64url')}.c2ln`
    expectProofRefused(await get(urlOf('koa'), dpopHeaders(token, none)), /algorithm/)
  })

  it('an Ed448 key under EdDSA', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed448' })
    const jwk = await exportJWK(publicKey)
    const ed448: DpopKey = { ...client, alg: 'EdDSA', privateKey, jwk, jkt: '' }
    const token = await accessToken(await calculateJwkThumbprint(jwk))
    const proof = await createProof(ed448, { htm: 'GET', htu: urlOf('koa'), accessToken: token })
    expectProofRefused(await get(urlOf('koa'), dpopHeaders(token, proof)), /not a key for EdDSA/)
  })

  it('an Ed448 or an EC key under Ed25519', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed448' })
    const jwk = await exportJWK(publicKey)
    const ed448: DpopKey = { ...client, alg: 'EdDSA', privateKey, jwk, jkt: '' }
    for (const key of [ed448, client]) {
      const token = await accessToken(await calculateJwkThumbprint(key.jwk))
      // jose signs with no other key as Ed25519: signed under the key's alg, the header renamed.
      const signed = await createProof(key, { htm: 'GET', htu: urlOf('koa'), accessToken: token })
      const [, payload, signature] = signed.split('.')
      const header = Buffer.from(JSON.stringify({ alg: 'Ed25519', typ: 'dpop+jwt', jwk: key.jwk }))
      const proof = `${header.toString('base64url')}.${payload}.${signature}`
      const received = await get(urlOf('koa'), dpopHeaders(token, proof))
      expectProofRefused(received, /not a key for Ed25519/)
    }
  })

  it('a wrong typ, or none', async () => {
    for (const typ of ['JWT', 'at+jwt', undefined]) {
      expectProofRefused(await callWithProof('koa', { header: { typ } }), /typ/)
    }
  })

  it('a signature that the header key does not verify', async () => {
    const other = await createDpopKey('ES256')
    const received = await callWithProof('koa', { signWith: other.privateKey })
    expectProofRefused(received, /signature/)
  })

  it('a proof key that is not the one the token is bound to', async () => {
    for (const name of NAMES) {
      const other = await createDpopKey('ES256')
      const token = await accessToken(client.jkt)
      const proof = await createProof(other, { htm: 'GET', htu: urlOf(name), accessToken: token })
      expectProofRefused(await get(urlOf(name), dpopHeaders(token, proof)), /bound to/)
    }
  })

  it('a wrong htm, or none', async () => {
    for (const name of NAMES) {
      expectProofRefused(await callWithProof(name, { htm: 'POST' }), /htm/)
      expectProofRefused(await callWithProof(name, { htm: 'get' }), /htm/)
      expectProofRefused(await callWithProof(name, { claims: { htm: undefined } }), /htm/)
    }
  })

  it('a wrong htu: another path, port, scheme or host, or none', async () => {
    for (const name of NAMES) {
      const url = new URL(urlOf(name))
      for (const htu of [
        urlOf(name, '/admin'),
        urlOf(name, '/orders/'),
        `http://127.0.0.1:1${url.pathname}`,
        `https://${url.host}${url.pathname}`,
        `http://localhost:${url.port}${url.pathname}`,
        'not a url',
      ]) {
        expectProofRefused(await callWithProof(name, { htu }), /htu/)
      }
      expectProofRefused(await callWithProof(name, { claims: { htu: undefined } }), /htu/)
    }
  })

  it('a wrong ath, or none', async () => {
    for (const name of NAMES) {
      expectProofRefused(await callWithProof(name, { claims: { ath: 'x'.repeat(43) } }), /ath/)
      expectProofRefused(await callWithProof(name, { claims: { ath: undefined } }), /ath/)
    }
  })

  it('an iat older than maxAge plus clockTolerance, or ahead of the clock beyond it', async () => {
    // Defaults: maxAge 60 s, clockTolerance 5 s.
    for (const name of NAMES) {
      expectProofRefused(await callWithProof(name, { iat: now() - 67 }), /too old/)
      expectProofRefused(await callWithProof(name, { iat: now() + 8 }), /iat/)
      expectProofRefused(await callWithProof(name, { claims: { iat: 'now' } }), /iat/)
      expect((await callWithProof(name, { iat: now() - 62 })).status).toBe(200)
      expect((await callWithProof(name, { iat: now() + 3 })).status).toBe(200)
    }
  })

  it('a missing or oversized jti', async () => {
    expectProofRefused(await callWithProof('koa', { claims: { jti: undefined } }), /jti/)
    expectProofRefused(await callWithProof('koa', { jti: 'j'.repeat(257) }), /jti/)
  })

  it('a proof used before, by each adapter', async () => {
    for (const name of NAMES) {
      const token = await accessToken(client.jkt)
      const proof = await createProof(client, { htm: 'GET', htu: urlOf(name), accessToken: token })
      expect((await get(urlOf(name), dpopHeaders(token, proof))).status).toBe(200)
      expectProofRefused(await get(urlOf(name), dpopHeaders(token, proof)), /used before/)
    }
  })

  it('all but one of 20 concurrent requests with one proof', async () => {
    for (const name of NAMES) {
      const token = await accessToken(client.jkt)
      const proof = await createProof(client, { htm: 'GET', htu: urlOf(name), accessToken: token })
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => get(urlOf(name), dpopHeaders(token, proof))),
      )
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1)
      for (const answer of answers.filter((a) => a.status !== 200)) expectProofRefused(answer)
    }
  })

  it('a proof for one method used with another', async () => {
    const token = await accessToken(client.jkt)
    const proof = await createProof(client, { htm: 'GET', htu: urlOf('koa'), accessToken: token })
    expectProofRefused(await send('POST', urlOf('koa'), dpopHeaders(token, proof)), /htm/)
  })
})
