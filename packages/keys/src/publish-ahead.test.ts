import { decodeProtectedHeader } from 'jose'
import { beforeEach, describe, expect, it } from 'vitest'
import { readKeys } from './key-info.js'
import { loadKeyRing, type KeyRing, type LoadKeyRingOptions } from './key-ring.js'
import { revokeKey, rotateKey } from './rotation.js'
import { fixtureKey } from './test-utils/fixture-keys.js'
import { MemoryKeyStore } from './test-utils/memory-key-store.js'

const hour = 3_600_000
const day = 24 * hour
const graceMs = 4 * hour
const aheadMs = 60_000
const start = Date.UTC(2025, 2, 10, 9)

let store: MemoryKeyStore
let now: number

beforeEach(() => {
  store = new MemoryKeyStore()
  now = start
})

async function load(options: Partial<LoadKeyRingOptions> = {}): Promise<KeyRing> {
  const ring = await loadKeyRing({
    tenant: 'acme',
    algorithm: 'RS256',
    store,
    now: () => now,
    rotateOnRestart: true,
    graceMs,
    publishAheadMs: aheadMs,
    generateKey: fixtureKey,
    ...options,
  })
  await ring.ensureKey()
  await ring.idle()
  return ring
}

async function kidSigning(ring: KeyRing): Promise<string | undefined> {
  const { token } = await ring.signer().sign({ sub: 'alice' })
  return decodeProtectedHeader(token).kid
}

function published(ring: KeyRing): string[] {
  return ring
    .jwks()
    .keys.map((jwk) => jwk.kid)
    .sort()
}

describe('publish ahead', () => {
  it('signs with a tenant\u2019s very first key at once', async () => {
    const ring = await load()
    expect(await kidSigning(ring)).toBe('2025-03-10')
    expect(ring.nextKey()).toBeUndefined()
    expect(store.get('acme', '2025-03-10')?.signsFrom).toBeUndefined()
  })

  it('publishes a restart\u2019s key at once and switches to it at its stored instant, without a reload', async () => {
    await load()
    now = start + day
    const ring = await load()
    expect(published(ring)).toEqual(['2025-03-10', '2025-03-11'])
    expect(ring.nextKey()).toEqual({ kid: '2025-03-11', signsFrom: now + aheadMs })
    expect(store.get('acme', '2025-03-11')).toMatchObject({
      createdAt: now,
      signsFrom: now + aheadMs,
    })
    expect(await kidSigning(ring)).toBe('2025-03-10')

    now += aheadMs - 1
    expect(await kidSigning(ring)).toBe('2025-03-10')
    now += 1
    expect(await kidSigning(ring)).toBe('2025-03-11')
    expect(ring.activeKid()).toBe('2025-03-11')
    // The store still holds the old key active until the poll's maintain retires it.
    expect(store.get('acme', '2025-03-10')?.state).toBe('active')
    await ring.maintain()
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    expect(published(ring)).toEqual(['2025-03-10', '2025-03-11'])
  })

  it('publishes an age rotation ahead and makes no second key while one waits', async () => {
    const ring = await load({ rotationMs: day })
    now = start + day
    await ring.maintain()
    expect(ring.nextKey()?.kid).toBe('2025-03-11')
    now += 1000
    await ring.maintain()
    expect((await store.listKeys('acme')).map((key) => key.kid)).toEqual([
      '2025-03-10',
      '2025-03-11',
    ])
    expect(await kidSigning(ring)).toBe('2025-03-10')
  })

  it('rotateKey publishes ahead; a running ring switches at the stored instant; readKeys shows next', async () => {
    const ring = await load()
    now = start + hour
    const result = await rotateKey({
      tenant: 'acme',
      store,
      now: () => now,
      publishAheadMs: aheadMs,
    })
    expect(result).toEqual({ kid: '2025-03-10.2', signsFrom: now + aheadMs, retired: [] })
    const info = await readKeys({ tenant: 'acme', store, graceMs, now: () => now })
    expect(info.map((key) => [key.kid, key.state, key.signsFrom])).toEqual([
      ['2025-03-10', 'active', start],
      ['2025-03-10.2', 'next', now + aheadMs],
    ])
    await ring.reload()
    expect(published(ring)).toEqual(['2025-03-10', '2025-03-10.2'])
    expect(await kidSigning(ring)).toBe('2025-03-10')
    now += aheadMs
    expect(await kidSigning(ring)).toBe('2025-03-10.2')
  })

  it('rotateKey with 0 (keys rotate --now) signs at once and retires the old key', async () => {
    const ring = await load()
    const result = await rotateKey({ tenant: 'acme', store, now: () => now, publishAheadMs: 0 })
    expect(result).toEqual({ kid: '2025-03-10.2', signsFrom: now, retired: ['2025-03-10'] })
    await ring.reload()
    expect(await kidSigning(ring)).toBe('2025-03-10.2')
  })

  it('revoking the signing key while a key waits makes the waiting key sign at once', async () => {
    const ring = await load()
    await rotateKey({ tenant: 'acme', store, now: () => now, publishAheadMs: aheadMs })
    const revoked = await revokeKey({
      tenant: 'acme',
      kid: '2025-03-10',
      algorithm: 'RS256',
      store,
      now: () => now,
    })
    expect(revoked.newActiveKid).toBeUndefined()
    await ring.reload()
    expect(published(ring)).toEqual(['2025-03-10.2'])
    expect(await kidSigning(ring)).toBe('2025-03-10.2')
  })

  it('a replacement for a revoked only key signs at once', async () => {
    const ring = await load()
    const revoked = await revokeKey({
      tenant: 'acme',
      kid: '2025-03-10',
      algorithm: 'RS256',
      store,
      now: () => now,
    })
    expect(store.get('acme', revoked.newActiveKid ?? '')?.signsFrom).toBeUndefined()
    await ring.reload()
    expect(await kidSigning(ring)).toBe(revoked.newActiveKid)
  })

  it('firstKeyAhead makes the first key at load, published ahead of signing access tokens', async () => {
    const ring = await load({ firstKeyAhead: true })
    expect(published(ring)).toEqual(['2025-03-10'])
    expect(ring.activeSignsFrom()).toBe(start + aheadMs)
    expect(store.get('acme', '2025-03-10')?.signsFrom).toBe(start + aheadMs)
  })
})
