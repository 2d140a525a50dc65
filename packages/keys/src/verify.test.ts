import { createSecretKey } from 'node:crypto'
import { SignJWT } from 'jose'
import { beforeEach, describe, expect, it } from 'vitest'
import { loadKeyRing, type KeyRing, type LoadKeyRingOptions } from './key-ring.js'
import { revokeKey, rotateKey } from './rotation.js'
import { MemoryKeyStore } from './test-utils/memory-key-store.js'
import { createAccessTokenVerifier } from './verify.js'

const hour = 3_600_000
const day = 24 * hour
const ttlSeconds = 2 * 3600
const graceMs = 2 * ttlSeconds * 1000
const start = Date.UTC(2025, 2, 10, 9)
const ISSUER = 'https://acme.test'
const SECRET = 'shared-hs256-secret-0123456789abcdef'

let store: MemoryKeyStore
let now: number

beforeEach(() => {
  store = new MemoryKeyStore()
  now = start
})

/**
 * A load followed by the ring's first use (which makes its first key) and whatever it started
 * in the background (a rotation): what a serving issuer's ring looks like a moment later.
 */
async function used(loading: Promise<KeyRing>): Promise<KeyRing> {
  const ring = await loading
  await ring.ensureKey()
  await ring.idle()
  return ring
}

/** A reload and the rotation it may have started in the background. */
async function reload(ring: KeyRing): Promise<void> {
  await ring.reload()
  await ring.idle()
}

function load(algorithm: 'HS256' | 'RS256', options: Partial<LoadKeyRingOptions> = {}) {
  return used(
    loadKeyRing({
      tenant: 'acme',
      algorithm,
      store,
      now: () => now,
      rotateOnRestart: true,
      graceMs,
      ...options,
    }),
  )
}

function verifierOf(ring: KeyRing) {
  return createAccessTokenVerifier({
    issuer: ISSUER,
    secret: SECRET,
    ring,
    // The window arithmetic, with the switch time the ring derives from its keys: the issuer
    // passes its algorithm record's instead.
    rs256Since: () => ring.rs256Since(),
    now: () => now,
    accessTokenTtlSeconds: ttlSeconds,
  })
}

/** An HS256 token as anyone holding the secret could make it, `iat` and `exp` in ms. */
function hs256Token(iatMs: number, expMs = iatMs + ttlSeconds * 1000): Promise<string> {
  return new SignJWT({ sub: 'alice' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setIssuedAt(Math.floor(iatMs / 1000))
    .setExpirationTime(Math.floor(expMs / 1000))
    .sign(createSecretKey(Buffer.from(SECRET, 'utf8')))
}

async function rs256Token(ring: KeyRing): Promise<string> {
  const iat = Math.floor(now / 1000)
  const { token } = await ring
    .signer()
    .sign({ iss: ISSUER, sub: 'alice', iat, exp: iat + ttlSeconds })
  return token
}

describe('createAccessTokenVerifier', () => {
  it('takes HS256 tokens at an HS256 tenant', async () => {
    const verify = verifierOf(await load('HS256'))
    expect(await verify(await hs256Token(now))).toMatchObject({ sub: 'alice' })
    expect(await verify(await hs256Token(now, now + 365 * day))).toMatchObject({ sub: 'alice' })
  })

  it('refuses a bad accessTokenTtlSeconds', async () => {
    const ring = await load('HS256')
    expect(() =>
      createAccessTokenVerifier({ issuer: ISSUER, ring, now: () => now, accessTokenTtlSeconds: 0 }),
    ).toThrow(TypeError)
  })

  describe('an HS256 token at an RS256 tenant', () => {
    it('is taken only when issued before the switch and expiring within a lifetime of it', async () => {
      const beforeSwitch = await hs256Token(start - 10 * 60_000)
      now = start
      const ring = await load('RS256')
      expect(ring.rs256Since()).toBe(start)
      const verify = verifierOf(ring)

      now = start + 60_000
      expect(await verify(beforeSwitch)).toMatchObject({ sub: 'alice' })
      // Forged with the secret after the switch.
      expect(await verify(await hs256Token(now))).toBeUndefined()
      expect(await verify(await hs256Token(start))).toBeUndefined()
      // Dated before the switch, but living longer than any token issued then could.
      expect(await verify(await hs256Token(start - 60_000, start + ttlSeconds * 1000 + 1000))).toBe(
        undefined,
      )
      expect(
        await verify(await hs256Token(start - 60_000, start + ttlSeconds * 1000)),
      ).toMatchObject({ sub: 'alice' })
      // No iat: cannot have been issued before the switch.
      const noIat = await new SignJWT({ sub: 'alice' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(ISSUER)
        .setExpirationTime(Math.floor(now / 1000) + 60)
        .sign(createSecretKey(Buffer.from(SECRET, 'utf8')))
      expect(await verify(noIat)).toBeUndefined()
      // RS256 tokens of the ring verify as ever.
      expect(await verify(await rs256Token(ring))).toMatchObject({ sub: 'alice' })

      // One lifetime after the switch no HS256 token is left.
      now = start + ttlSeconds * 1000 + 1000
      expect(await verify(beforeSwitch)).toBeUndefined()
      expect(await verify(await hs256Token(start - 1000))).toBeUndefined()
    })

    it('keeps the switch time across restarts, replicas and rotations', async () => {
      await load('RS256')
      now = start + 3 * day
      await rotateKey({ tenant: 'acme', store, now: () => now })
      now += hour
      // A restart on a later date rotates again; a second replica loads the same store.
      const ring = await load('RS256')
      const replica = await load('RS256', { rotateOnRestart: false })
      expect(ring.rs256Since()).toBe(start)
      expect(replica.rs256Since()).toBe(start)
      const verify = verifierOf(ring)
      expect(await verify(await hs256Token(now - 60_000))).toBeUndefined()
    })

    it('keeps the switch time when an active key is revoked and replaced', async () => {
      const ring = await load('RS256')
      now = start + hour
      await revokeKey({
        tenant: 'acme',
        kid: '2025-03-10',
        algorithm: 'RS256',
        store,
        now: () => now,
      })
      await reload(ring)
      expect(ring.activeKid()).toBe('2025-03-10.2')
      expect(ring.rs256Since()).toBe(start)
    })

    it('starts a new period when the tenant comes back from a rollback to HS256', async () => {
      await load('RS256')
      now = start + day
      const hs = await load('HS256')
      expect(hs.rs256Since()).toBeUndefined()
      now = start + 2 * day
      const issuedUnderHs256 = await hs256Token(now - hour)
      const ring = await load('RS256')
      expect(ring.rs256Since()).toBe(start + 2 * day)
      const verify = verifierOf(ring)
      now += 60_000
      expect(await verify(issuedUnderHs256)).toMatchObject({ sub: 'alice' })
      expect(await verify(await hs256Token(now))).toBeUndefined()
    })

    it('finds no HS256 token alive once the start of the chain is pruned', async () => {
      await load('RS256')
      now = start + day
      await rotateKey({ tenant: 'acme', store, now: () => now })
      now += graceMs
      const ring = await load('RS256', { rotateOnRestart: false })
      // The load that prunes still counted the pruned key; the next read no longer sees it.
      expect(ring.rs256Since()).toBe(start)
      await reload(ring)
      expect(await store.listKeys('acme')).toHaveLength(1)
      // The pruned key's successor was created a grace ago: that is the start now seen, and any
      // token issued before it has expired.
      expect(ring.rs256Since()).toBe(start + day)
      const verify = verifierOf(ring)
      expect(await verify(await hs256Token(start + day - 1000))).toBeUndefined()
    })
  })

  it('keeps RS256 tokens of a rolled-back tenant until their key leaves the JWKS', async () => {
    const rs = await load('RS256')
    const token = await rs256Token(rs)
    now = start + hour
    const verify = verifierOf(await load('HS256'))
    expect(await verify(token)).toMatchObject({ sub: 'alice' })
  })

  it('refuses the tokens of a revoked kid once the ring reloads', async () => {
    const ring = await load('RS256')
    const verify = verifierOf(ring)
    const token = await rs256Token(ring)
    expect(await verify(token)).toMatchObject({ sub: 'alice' })
    await revokeKey({
      tenant: 'acme',
      kid: '2025-03-10',
      algorithm: 'RS256',
      store,
      now: () => now,
    })
    await reload(ring)
    expect(await verify(token)).toBeUndefined()
    expect(await verify(await rs256Token(ring))).toMatchObject({ sub: 'alice' })
  })

  describe('an ID token', () => {
    it.each(['nonce', 'at_hash', 'azp'])(
      'is refused when it carries %s, signed by the ring or with the secret',
      async (claim) => {
        const ring = await load('HS256', { idTokens: true })
        const verify = verifierOf(ring)
        const iat = Math.floor(now / 1000)
        const claims = { iss: ISSUER, sub: 'alice', aud: 'app', iat, exp: iat + ttlSeconds }
        const { token } = await ring.signer().sign({ ...claims, [claim]: 'x' })
        expect(await verify(token)).toBeUndefined()
        // The same claims without it verify: the refusal is for the claim alone.
        expect(await verify((await ring.signer().sign(claims)).token)).toMatchObject(claims)
        const hs256 = await new SignJWT({ sub: 'alice', [claim]: 'x' })
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setIssuer(ISSUER)
          .setIssuedAt(iat)
          .setExpirationTime(iat + ttlSeconds)
          .sign(createSecretKey(Buffer.from(SECRET, 'utf8')))
        expect(await verify(hs256)).toBeUndefined()
        expect(await verify(await hs256Token(now))).toMatchObject({ sub: 'alice' })
      },
    )

    it('is refused at an RS256 tenant too, even with a null claim', async () => {
      const ring = await load('RS256')
      const verify = verifierOf(ring)
      const iat = Math.floor(now / 1000)
      const { token } = await ring
        .signer()
        .sign({ iss: ISSUER, sub: 'alice', iat, exp: iat + ttlSeconds, at_hash: null })
      expect(await verify(token)).toBeUndefined()
    })
  })
})
