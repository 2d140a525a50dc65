import { createLocalJWKSet, jwtVerify } from 'jose'
import { beforeEach, describe, expect, it } from 'vitest'
import { KeyError } from './errors.js'
import { generateRsaKey } from './generate.js'
import { readKeys } from './key-info.js'
import { loadKeyRing, type KeyRing, type LoadKeyRingOptions } from './key-ring.js'
import { revokeKey, rotateKey } from './rotation.js'
import { MemoryKeyStore } from './test-utils/memory-key-store.js'

const hour = 3_600_000
const graceMs = 4 * hour
const start = Date.UTC(2025, 2, 10, 9)
const secret = 'test-key-encryption-secret-0123456789'

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

function load(options: Partial<LoadKeyRingOptions> = {}): Promise<KeyRing> {
  return used(
    loadKeyRing({
      tenant: 'acme',
      algorithm: 'RS256',
      store,
      now: () => now,
      rotateOnRestart: true,
      graceMs,
      ...options,
    }),
  )
}

function rotate(options: { encryptionSecret?: string } = {}) {
  return rotateKey({ tenant: 'acme', store, now: () => now, ...options })
}

function revoke(
  kid: string,
  options: { encryptionSecret?: string; algorithm?: 'HS256'; idTokens?: boolean } = {},
) {
  return revokeKey({ tenant: 'acme', kid, algorithm: 'RS256', store, now: () => now, ...options })
}

function kids(ring: KeyRing): string[] {
  return ring.jwks().keys.map((jwk) => jwk.kid)
}

async function states(): Promise<Record<string, string>> {
  return Object.fromEntries((await store.listKeys('acme')).map((key) => [key.kid, key.state]))
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(KeyError)
    return (error as KeyError).code
  }
  return undefined
}

describe('rotateKey', () => {
  it('makes YYYY-MM-DD.2, then .3 on the same date, retiring the previous key now', async () => {
    await load()
    now = start + hour
    expect(await rotate()).toEqual({ kid: '2025-03-10.2', signsFrom: now, retired: ['2025-03-10'] })
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    now += hour
    expect(await rotate()).toEqual({
      kid: '2025-03-10.3',
      signsFrom: now,
      retired: ['2025-03-10.2'],
    })
    expect(await states()).toEqual({
      '2025-03-10': 'retired',
      '2025-03-10.2': 'retired',
      '2025-03-10.3': 'active',
    })
  })

  it('takes the bare date on a new day and makes a first key for a tenant without one', async () => {
    expect(await rotate()).toEqual({ kid: '2025-03-10', signsFrom: now, retired: [] })
    now = start + 24 * hour
    expect(await rotate()).toEqual({ kid: '2025-03-11', signsFrom: now, retired: ['2025-03-10'] })
  })

  it('never reuses a kid, whatever its state, even after it was pruned', async () => {
    const ring = await load()
    now = start + hour
    await rotate()
    await revoke('2025-03-10.2')
    // The first key is deleted once its grace has passed; .2 stays, revoked.
    now += graceMs
    await reload(ring)
    expect(Object.keys(await states())).toEqual(['2025-03-10.2', '2025-03-10.3'])
    expect(await store.listPrunedKids('acme')).toEqual(['2025-03-10'])

    expect((await rotate()).kid).toBe('2025-03-10.4')
    await store.deleteKey('acme', '2025-03-10.4')
    expect((await rotate()).kid).toBe('2025-03-10.5')
  })

  it('is picked up by a running ring on its next reload, the old key staying published', async () => {
    const ring = await load()
    now = start + hour
    await rotate()
    expect(ring.activeKid()).toBe('2025-03-10')
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2', '2025-03-10'])
  })

  it('converges on one new key when two rotations race', async () => {
    await load()
    now = start + hour
    const [a, b] = await Promise.all([rotate(), rotate()])
    expect(a.kid).toBe('2025-03-10.2')
    expect(b.kid).toBe('2025-03-10.2')
    expect(Object.keys(await states())).toEqual(['2025-03-10', '2025-03-10.2'])
  })

  it('seals the new key with the secret, and changes nothing with a wrong one', async () => {
    await load({ encryptionSecret: secret })
    now = start + hour
    const before = structuredClone([...store.rows.entries()])
    expect(await codeOf(rotate({ encryptionSecret: 'w'.repeat(32) }))).toBe('ERR_KEY_DECRYPT')
    expect(await codeOf(rotate())).toBe('ERR_KEY_DECRYPT')
    expect([...store.rows.entries()]).toEqual(before)

    await rotate({ encryptionSecret: secret })
    expect(store.get('acme', '2025-03-10.2')?.privateKey).toMatch(/^enc:v1:/)
    const ring = await load({ encryptionSecret: secret })
    expect(ring.activeKid()).toBe('2025-03-10.2')
  })
})

describe('revokeKey', () => {
  it('revokes the active key of an RS256 tenant and makes a new active one', async () => {
    const ring = await load()
    const { token } = await ring.signer().sign({ sub: 'alice' })
    now = start + hour
    expect(await revoke('2025-03-10')).toEqual({
      kid: '2025-03-10',
      previousState: 'active',
      newActiveKid: '2025-03-10.2',
    })
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'revoked', retiredAt: now })

    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2'])
    const keySet = createLocalJWKSet({ keys: [...ring.jwks().keys] })
    await expect(jwtVerify(token, keySet)).rejects.toThrow()
    const { token: fresh } = await ring.signer().sign({ sub: 'alice' })
    await expect(jwtVerify(fresh, keySet)).resolves.toBeDefined()
  })

  it('takes a retired key out of the JWKS at once, within its grace, without a new key', async () => {
    const ring = await load()
    now = start + hour
    await rotate()
    await reload(ring)
    expect(kids(ring)).toEqual(['2025-03-10.2', '2025-03-10'])

    expect(await revoke('2025-03-10')).toEqual({ kid: '2025-03-10', previousState: 'retired' })
    await reload(ring)
    expect(kids(ring)).toEqual(['2025-03-10.2'])
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'revoked', retiredAt: now })
  })

  it('makes no new key for an HS256 tenant', async () => {
    await load()
    now = start + hour
    await load({ algorithm: 'HS256' })
    expect(await revoke('2025-03-10', { algorithm: 'HS256' })).toEqual({
      kid: '2025-03-10',
      previousState: 'retired',
    })
    expect(await states()).toEqual({ '2025-03-10': 'revoked' })
  })

  it('replaces the revoked ID-token key of an HS256 tenant with idTokens', async () => {
    const ring = await load({ algorithm: 'HS256', idTokens: true })
    now = start + hour
    expect(await revoke('2025-03-10', { algorithm: 'HS256', idTokens: true })).toEqual({
      kid: '2025-03-10',
      previousState: 'active',
      newActiveKid: '2025-03-10.2',
    })
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2'])
  })

  it('changes nothing for a key already revoked', async () => {
    await load()
    await revoke('2025-03-10')
    const before = structuredClone([...store.rows.entries()])
    expect(await revoke('2025-03-10')).toEqual({ kid: '2025-03-10', previousState: 'revoked' })
    expect([...store.rows.entries()]).toEqual(before)
  })

  it('throws ERR_KEY_NOT_FOUND for a kid the tenant does not have', async () => {
    await load()
    await store.insertKeyIfAbsent(await generateRsaKey('globex', '2025-03-11', start))
    expect(await codeOf(revoke('2025-03-11'))).toBe('ERR_KEY_NOT_FOUND')
    await expect(revoke('nope')).rejects.toThrow('tenant "acme" has no key "nope"')
  })

  it('with a wrong secret, refuses to revoke an active key it would have to replace', async () => {
    await load({ encryptionSecret: secret })
    const before = structuredClone([...store.rows.entries()])
    expect(await codeOf(revoke('2025-03-10', { encryptionSecret: 'w'.repeat(32) }))).toBe(
      'ERR_KEY_DECRYPT',
    )
    expect([...store.rows.entries()]).toEqual(before)
    expect((await revoke('2025-03-10', { encryptionSecret: secret })).newActiveKid).toBe(
      '2025-03-10.2',
    )
    expect(store.get('acme', '2025-03-10.2')?.privateKey).toMatch(/^enc:v1:/)
  })
})

describe('readKeys', () => {
  it('describes each key without key material, with when a retired key leaves the JWKS', async () => {
    await load()
    now = start + hour
    await rotate()
    now += hour
    await rotate()
    await revoke('2025-03-10.2')
    const infos = await readKeys({ tenant: 'acme', store, graceMs })
    expect(infos).toEqual([
      {
        tenant: 'acme',
        kid: '2025-03-10',
        alg: 'RS256',
        state: 'retired',
        createdAt: start,
        retiredAt: start + hour,
        publishedUntil: start + hour + graceMs,
      },
      {
        tenant: 'acme',
        kid: '2025-03-10.2',
        alg: 'RS256',
        state: 'revoked',
        createdAt: start + hour,
        retiredAt: start + 2 * hour,
      },
      {
        tenant: 'acme',
        kid: '2025-03-10.3',
        alg: 'RS256',
        state: 'active',
        createdAt: start + 2 * hour,
        signsFrom: start + 2 * hour,
      },
    ])
    expect(await readKeys({ tenant: 'globex', store, graceMs })).toEqual([])
  })
})
