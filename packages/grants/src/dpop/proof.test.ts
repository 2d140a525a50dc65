import { createHash } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { JWK, KeyLike } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { OAuthError } from '../errors.js'
import type { MarkStore, SecretStore } from '../ports.js'
import { currentDpopNonce, DPOP_NONCE_WINDOW_SECONDS } from './nonce.js'
import { MAX_DPOP_PROOF_LENGTH, verifyDpopProof } from './proof.js'
import type { DpopRequest, DpopTenant } from './proof.js'

const ISSUER = 'https://id.acme.test'
const TENANT: DpopTenant = { name: 'acme', issuer: ISSUER }
const NOW = 1_770_000_000_000

/** Marks as a store keeps them: set once until they expire. */
function memoryMarks(): MarkStore & { size: () => number } {
  const marks = new Map<string, number>()
  return {
    mark: (tenant, kind, id, expiresAt, now) => {
      const key = `${tenant}\n${kind}\n${id}`
      const until = marks.get(key)
      if (until !== undefined && until > now) return Promise.resolve(false)
      marks.set(key, expiresAt)
      return Promise.resolve(true)
    },
    isMarked: (tenant, kind, id, now) =>
      Promise.resolve((marks.get(`${tenant}\n${kind}\n${id}`) ?? 0) > now),
    size: () => marks.size,
  }
}

function memorySecrets(): SecretStore {
  const secrets = new Map<string, string>()
  return {
    getOrCreateSecret: (name, candidate) => {
      if (!secrets.has(name)) secrets.set(name, candidate)
      return Promise.resolve(secrets.get(name)!)
    },
  }
}

function depsAt(now = NOW) {
  return { marks: memoryMarks(), secrets: memorySecrets(), clock: () => now }
}

interface Signer {
  alg: string
  privateKey: KeyLike
  jwk: JWK
}

let es256: Signer
let rsa: Signer
let ed25519: Signer

async function signer(alg: string, options?: { crv: string }): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, options)
  return { alg, privateKey, jwk: await exportJWK(publicKey) }
}

beforeAll(async () => {
  ;[es256, rsa, ed25519] = await Promise.all([
    signer('ES256'),
    signer('PS256'),
    signer('EdDSA', { crv: 'Ed25519' }),
  ])
})

interface ProofOptions {
  key?: Signer
  alg?: string
  typ?: string
  jwk?: JWK | undefined
  claims?: Record<string, unknown>
}

function makeProof(options: ProofOptions = {}): Promise<string> {
  const key = options.key ?? es256
  const header: Record<string, unknown> = {
    alg: options.alg ?? key.alg,
    typ: options.typ ?? 'dpop+jwt',
  }
  const jwk = 'jwk' in options ? options.jwk : key.jwk
  if (jwk !== undefined) header.jwk = jwk
  return new SignJWT({
    jti: crypto.randomUUID(),
    htm: 'POST',
    htu: `${ISSUER}/token`,
    iat: NOW / 1000,
    ...options.claims,
  })
    .setProtectedHeader(header as { alg: string })
    .sign(key.privateKey)
}

function tokenRequest(proofs: string[], extra: Partial<DpopRequest> = {}): DpopRequest {
  return { proofs, method: 'POST', path: '/token', ...extra }
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof OAuthError))
    throw new Error(`expected an OAuthError, got ${String(error)}`)
  return error
}

describe('verifyDpopProof', () => {
  it('answers undefined without a DPoP header', async () => {
    expect(await verifyDpopProof(tokenRequest([]), TENANT, depsAt())).toBeUndefined()
  })

  it.each([
    ['ES256', () => es256],
    ['PS256', () => rsa],
    ['EdDSA', () => ed25519],
  ])('accepts a %s proof and gives the RFC 7638 thumbprint of its key', async (_, key) => {
    const proof = await makeProof({ key: key() })
    const result = await verifyDpopProof(tokenRequest([proof]), TENANT, depsAt())
    expect(result).toEqual({ jkt: await calculateJwkThumbprint(key().jwk, 'sha256') })
  })

  it('accepts alg Ed25519 (the fully specified name) with an Ed25519 key, same thumbprint', async () => {
    const proof = await makeProof({ key: ed25519, alg: 'Ed25519' })
    const result = await verifyDpopProof(tokenRequest([proof]), TENANT, depsAt())
    expect(result).toEqual({ jkt: await calculateJwkThumbprint(ed25519.jwk, 'sha256') })
  })

  it('refuses alg Ed25519 with a key of another type, and spends nothing', async () => {
    const ed448 = await signer('EdDSA', { crv: 'Ed448' })
    const signed = await makeProof({ key: ed448 })
    // The same proof, its header renamed: jose will not verify an Ed448 key as Ed25519.
    const [, payload, signature] = signed.split('.')
    const header = { alg: 'Ed25519', typ: 'dpop+jwt', jwk: ed448.jwk }
    const renamed = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${payload}.${signature}`
    const es256Header = { alg: 'Ed25519', typ: 'dpop+jwt', jwk: es256.jwk }
    const onEc = `${Buffer.from(JSON.stringify(es256Header)).toString('base64url')}.${payload}.${signature}`
    for (const proof of [renamed, onEc]) {
      const deps = depsAt()
      const error = await refusal(verifyDpopProof(tokenRequest([proof]), TENANT, deps))
      expect(error.code).toBe('invalid_dpop_proof')
      expect(deps.marks.size()).toBe(0)
    }
  })

  it('refuses an Ed448 key under EdDSA, as resource servers do, and spends nothing', async () => {
    const deps = depsAt()
    const proof = await makeProof({ key: await signer('EdDSA', { crv: 'Ed448' }) })
    const error = await refusal(verifyDpopProof(tokenRequest([proof]), TENANT, deps))
    expect(error.code).toBe('invalid_dpop_proof')
    expect(error.description).toMatch(/Ed25519/)
    expect(deps.marks.size()).toBe(0)
  })

  it('accepts RS256 with an RSA key', async () => {
    const proof = await makeProof({ key: rsa, alg: 'RS256' })
    await expect(verifyDpopProof(tokenRequest([proof]), TENANT, depsAt())).resolves.toBeDefined()
  })

  it('accepts htu under the request origin, ignoring query and fragment', async () => {
    const proof = await makeProof({ claims: { htu: 'https://login.acme.test/token?x=1#f' } })
    const request = tokenRequest([proof], { requestOrigin: 'https://login.acme.test' })
    await expect(verifyDpopProof(request, TENANT, depsAt())).resolves.toBeDefined()
  })

  it('compares htu as a URL: case of the host and the default port do not matter', async () => {
    const proof = await makeProof({ claims: { htu: 'HTTPS://ID.Acme.test:443/token' } })
    await expect(verifyDpopProof(tokenRequest([proof]), TENANT, depsAt())).resolves.toBeDefined()
  })

  it('accepts an iat within the window on either side', async () => {
    for (const iat of [NOW / 1000 - 60, NOW / 1000 + 60]) {
      const proof = await makeProof({ claims: { iat } })
      await expect(verifyDpopProof(tokenRequest([proof]), TENANT, depsAt())).resolves.toBeDefined()
    }
  })

  const refused: [string, () => Promise<string[]>, Partial<DpopRequest>?][] = [
    ['two DPoP headers', async () => [await makeProof(), await makeProof()]],
    ['an oversized header', () => Promise.resolve(['a'.repeat(MAX_DPOP_PROOF_LENGTH + 1)])],
    ['a header that is not a JWT', () => Promise.resolve(['not-a-jwt'])],
    ['typ JWT', async () => [await makeProof({ typ: 'JWT' })]],
    ['no jwk', async () => [await makeProof({ jwk: undefined })]],
    ['a private jwk', async () => [await makeProof({ jwk: { ...es256.jwk, d: 'AAAA' } })]],
    ['a jwk of another key', async () => [await makeProof({ jwk: rsa.jwk, alg: 'ES256' })]],
    ['htm GET', async () => [await makeProof({ claims: { htm: 'GET' } })]],
    [
      'htu of another endpoint',
      async () => [await makeProof({ claims: { htu: `${ISSUER}/revoke` } })],
    ],
    [
      'htu of another host',
      async () => [await makeProof({ claims: { htu: 'https://evil.test/token' } })],
    ],
    ['htu that is not a URL', async () => [await makeProof({ claims: { htu: 'token' } })]],
    ['no jti', async () => [await makeProof({ claims: { jti: undefined } })]],
    ['an old iat', async () => [await makeProof({ claims: { iat: NOW / 1000 - 61 } })]],
    ['a future iat', async () => [await makeProof({ claims: { iat: NOW / 1000 + 61 } })]],
    ['no iat', async () => [await makeProof({ claims: { iat: undefined } })]],
    ['an expired exp', async () => [await makeProof({ claims: { exp: NOW / 1000 - 1 } })]],
    [
      'a wrong ath',
      async () => [await makeProof({ claims: { ath: 'x' } })],
      { accessToken: 'token' },
    ],
    ['no ath with an access token', async () => [await makeProof()], { accessToken: 'token' }],
  ]

  it.each(refused)('refuses %s: invalid_dpop_proof, nothing marked', async (_, proofs, extra) => {
    const deps = depsAt()
    const error = await refusal(verifyDpopProof(tokenRequest(await proofs(), extra), TENANT, deps))
    expect(error.code).toBe('invalid_dpop_proof')
    expect(deps.marks.size()).toBe(0)
  })

  it('refuses alg HS256 with a symmetric key', async () => {
    const secret = new Uint8Array(32).fill(7)
    const proof = await new SignJWT({
      jti: 'j',
      htm: 'POST',
      htu: `${ISSUER}/token`,
      iat: NOW / 1000,
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct' } })
      .sign(secret)
    const error = await refusal(verifyDpopProof(tokenRequest([proof]), TENANT, depsAt()))
    expect(error.code).toBe('invalid_dpop_proof')
  })

  it('refuses a signature made by another key', async () => {
    const proof = await makeProof()
    const other = await makeProof({ key: await signer('ES256') })
    const [header, payload] = proof.split('.')
    const forged = `${header}.${payload}.${other.split('.')[2]}`
    const error = await refusal(verifyDpopProof(tokenRequest([forged]), TENANT, depsAt()))
    expect(error.description).toMatch(/signature/)
  })

  it('accepts an ath that is the SHA-256 of the access token', async () => {
    const ath = createHash('sha256').update('token').digest('base64url')
    const proof = await makeProof({ claims: { ath, htm: 'GET', htu: `${ISSUER}/userinfo` } })
    const request = { proofs: [proof], method: 'GET', path: '/userinfo', accessToken: 'token' }
    await expect(verifyDpopProof(request, TENANT, depsAt())).resolves.toBeDefined()
  })

  it('accepts a proof once: its replay is invalid_dpop_proof', async () => {
    const deps = depsAt()
    const proof = await makeProof()
    await verifyDpopProof(tokenRequest([proof]), TENANT, deps)
    const error = await refusal(verifyDpopProof(tokenRequest([proof]), TENANT, deps))
    expect(error).toMatchObject({ code: 'invalid_dpop_proof', description: /already used/ })
  })

  it('of concurrent uses of one proof accepts exactly one', async () => {
    const deps = depsAt()
    const proof = await makeProof()
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => verifyDpopProof(tokenRequest([proof]), TENANT, deps)),
    )
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
  })

  it('keeps the jti mark until the proof is too old to pass', async () => {
    const marks = memoryMarks()
    const proof = await makeProof({ claims: { iat: NOW / 1000 - 30 } })
    const deps = { ...depsAt(), marks }
    await verifyDpopProof(tokenRequest([proof]), TENANT, deps)
    // At the last instant the proof is fresh, its jti is still marked.
    const later = { ...deps, clock: () => NOW + 30_000 }
    expect(
      (await refusal(verifyDpopProof(tokenRequest([proof]), TENANT, later))).description,
    ).toMatch(/already used/)
  })

  it('follows dpopProofMaxAgeSeconds', async () => {
    const proof = await makeProof({ claims: { iat: NOW / 1000 - 200 } })
    const deps = { ...depsAt(), dpopProofMaxAgeSeconds: 300 }
    await expect(verifyDpopProof(tokenRequest([proof]), TENANT, deps)).resolves.toBeDefined()
  })
})

describe('server nonces', () => {
  const NONCE_TENANT: DpopTenant = { ...TENANT, dpopNonce: true }

  it('refuses a proof without a nonce: use_dpop_nonce with the current nonce', async () => {
    const deps = depsAt()
    const error = await refusal(
      verifyDpopProof(tokenRequest([await makeProof()]), NONCE_TENANT, deps),
    )
    expect(error.code).toBe('use_dpop_nonce')
    expect(error.dpopNonce).toBe(await currentDpopNonce('acme', deps))
    expect(deps.marks.size()).toBe(0)
  })

  it('accepts the current nonce and that of the previous window, not older', async () => {
    const deps = depsAt()
    const nonce = await currentDpopNonce('acme', deps)
    const proof = await makeProof({ claims: { nonce } })
    await expect(verifyDpopProof(tokenRequest([proof]), NONCE_TENANT, deps)).resolves.toBeDefined()
    const window = DPOP_NONCE_WINDOW_SECONDS * 1000
    const next = { ...deps, clock: () => NOW + window }
    const nextIat = (NOW + window) / 1000
    const proofNext = await makeProof({ claims: { nonce, iat: nextIat } })
    await expect(
      verifyDpopProof(tokenRequest([proofNext]), NONCE_TENANT, next),
    ).resolves.toBeDefined()
    const late = { ...deps, clock: () => NOW + 2 * window }
    const proofLate = await makeProof({ claims: { nonce, iat: (NOW + 2 * window) / 1000 } })
    const error = await refusal(verifyDpopProof(tokenRequest([proofLate]), NONCE_TENANT, late))
    expect(error.code).toBe('use_dpop_nonce')
    expect(error.dpopNonce).not.toBe(nonce)
  })

  it('gives every replica sharing the store the same nonce; another tenant has its own', async () => {
    const secrets = memorySecrets()
    const a = await currentDpopNonce('acme', { secrets, clock: () => NOW })
    const b = await currentDpopNonce('acme', { secrets, clock: () => NOW })
    expect(a).toBe(b)
    expect(await currentDpopNonce('globex', { secrets, clock: () => NOW })).not.toBe(a)
    expect(await currentDpopNonce('acme', { secrets: memorySecrets(), clock: () => NOW })).not.toBe(
      a,
    )
  })

  it('refuses a wrong nonce', async () => {
    const proof = await makeProof({ claims: { nonce: 'made-up' } })
    const error = await refusal(verifyDpopProof(tokenRequest([proof]), NONCE_TENANT, depsAt()))
    expect(error.code).toBe('use_dpop_nonce')
  })
})
