import { createSecretKey } from 'node:crypto'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { hs256SwitchTime, recordTenantAlgorithms } from './algorithm-history.js'
import { loadKeyRing } from './key-ring.js'
import type { TenantAlgorithmRecord, TenantAlgorithmStore } from './ports.js'
import { fixtureKey } from './test-utils/fixture-keys.js'
import { MemoryKeyStore } from './test-utils/memory-key-store.js'
import { createAccessTokenVerifier } from './verify.js'

const start = Date.UTC(2025, 2, 10, 9)
const aheadMs = 60_000
const SECRET = 'test-secret-0123456789-abcdefghijklmnop'
const ISSUER = 'https://acme.test'
const ttlSeconds = 3600

/** The port in a Map; each call awaits once, as separate processes would interleave. */
function memoryAlgorithms(): TenantAlgorithmStore & { rows: Map<string, TenantAlgorithmRecord> } {
  const rows = new Map<string, TenantAlgorithmRecord>()
  return {
    rows,
    async listTenantAlgorithms(tenants) {
      await Promise.resolve()
      return tenants.flatMap((t) => (rows.has(t) ? [{ ...rows.get(t)! }] : []))
    },
    async insertTenantAlgorithmIfAbsent(record) {
      await Promise.resolve()
      if (rows.has(record.tenant)) return false
      rows.set(record.tenant, { ...record })
      return true
    },
    async replaceTenantAlgorithm(expected, next) {
      await Promise.resolve()
      const stored = rows.get(expected.tenant)
      if (JSON.stringify(stored) !== JSON.stringify(expected)) return false
      rows.set(expected.tenant, { ...next })
      return true
    },
  }
}

function record(
  store: TenantAlgorithmStore,
  algorithm: 'HS256' | 'RS256',
  now: number,
): Promise<Map<string, TenantAlgorithmRecord>> {
  return recordTenantAlgorithms({
    store,
    tenants: [{ name: 'acme', algorithm }],
    now,
    publishAheadMs: aheadMs,
  })
}

function hs256Token(iatMs: number): Promise<string> {
  return new SignJWT({ sub: 'mallory' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setIssuedAt(Math.floor(iatMs / 1000))
    .setExpirationTime(Math.floor(iatMs / 1000) + ttlSeconds)
    .sign(createSecretKey(Buffer.from(SECRET, 'utf8')))
}

describe('recordTenantAlgorithms', () => {
  it('records a new tenant’s algorithm with no HS256 past, once', async () => {
    const store = memoryAlgorithms()
    const records = await record(store, 'RS256', start)
    expect(records.get('acme')).toEqual({
      tenant: 'acme',
      algorithm: 'RS256',
      since: start,
      hs256Before: false,
    })
    await record(store, 'RS256', start + 1000)
    expect(store.rows.get('acme')?.since).toBe(start)
    expect(hs256SwitchTime(records.get('acme'))).toBeUndefined()
  })

  it('records a switch from HS256 as RS256 from the end of the publish-ahead delay', async () => {
    const store = memoryAlgorithms()
    await record(store, 'HS256', start)
    const records = await record(store, 'RS256', start + 1000)
    expect(records.get('acme')).toEqual({
      tenant: 'acme',
      algorithm: 'RS256',
      since: start + 1000 + aheadMs,
      hs256Before: true,
    })
    expect(hs256SwitchTime(records.get('acme'))).toBe(start + 1000 + aheadMs)
    // A rollback, then a second switch: a new period.
    await record(store, 'HS256', start + 2000)
    const again = await record(store, 'RS256', start + 3000)
    expect(hs256SwitchTime(again.get('acme'))).toBe(start + 3000 + aheadMs)
  })

  it('converges when replicas apply the same switch at once', async () => {
    const store = memoryAlgorithms()
    await record(store, 'HS256', start)
    const [a, b] = await Promise.all([
      record(store, 'RS256', start + 1000),
      record(store, 'RS256', start + 2000),
    ])
    expect(a.get('acme')).toEqual(b.get('acme'))
    expect(a.get('acme')).toEqual(store.rows.get('acme'))
  })
})

describe('an HS256 token forged with the secret', () => {
  it('is refused by a tenant that was RS256 from its first key, even dated before that key', async () => {
    const store = memoryAlgorithms()
    const keys = new MemoryKeyStore()
    const records = await record(store, 'RS256', start)
    const ring = await loadKeyRing({
      tenant: 'acme',
      algorithm: 'RS256',
      store: keys,
      now: () => start + 60_000,
      rotateOnRestart: true,
      graceMs: 7_200_000,
      generateKey: fixtureKey,
    })
    await ring.ensureKey()
    // What main did: the period start derived from the keys lets this forgery through.
    expect(ring.rs256Since()).toBe(start + 60_000)
    const verify = createAccessTokenVerifier({
      issuer: ISSUER,
      secret: SECRET,
      ring,
      rs256Since: () => hs256SwitchTime(records.get('acme')),
      now: () => start + 120_000,
      accessTokenTtlSeconds: ttlSeconds,
    })
    expect(await verify(await hs256Token(start))).toBeUndefined()
    // Without the record at all, the same.
    const bare = createAccessTokenVerifier({
      issuer: ISSUER,
      secret: SECRET,
      ring,
      now: () => start + 120_000,
      accessTokenTtlSeconds: ttlSeconds,
    })
    expect(await bare(await hs256Token(start))).toBeUndefined()
  })
})
