import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { KeyError } from './errors.js'
import { generateRsaKey } from './generate.js'
import type { JwksDocument } from './jwks.js'
import { loadKeyRing, verifyStoredKeys, type KeyRing, type LoadKeyRingOptions } from './key-ring.js'
import { rotateKey } from './rotation.js'
import type { StoredKey } from './ports.js'
import { fixtureKey } from './test-utils/fixture-keys.js'
import { MemoryKeyStore } from './test-utils/memory-key-store.js'

const hour = 3_600_000
const day = 24 * hour
const graceMs = 4 * hour
const start = Date.UTC(2025, 2, 10, 9)

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

function options(): LoadKeyRingOptions {
  return {
    tenant: 'acme',
    algorithm: 'RS256',
    store,
    now: () => now,
    rotateOnRestart: true,
    graceMs,
    // Pre-made keys: a test's time must not depend on how long RSA generation takes under load.
    generateKey: fixtureKey,
  }
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
      generateKey: fixtureKey,
      ...options,
    }),
  )
}

function keySet(doc: JwksDocument): ReturnType<typeof createLocalJWKSet> {
  return createLocalJWKSet({ keys: [...doc.keys] })
}

function kids(ring: KeyRing): string[] {
  return ring.jwks().keys.map((jwk) => jwk.kid)
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

describe('loadKeyRing (RS256)', () => {
  it('creates a key named for the UTC date on first use', async () => {
    const ring = await load()
    expect(ring.tenant).toBe('acme')
    expect(ring.algorithm).toBe('RS256')
    expect(ring.activeKid()).toBe('2025-03-10')
    expect(await store.listKeys('acme')).toHaveLength(1)
  })

  it('signs tokens that verify against its JWKS and carry the kid', async () => {
    const ring = await load()
    const signer = ring.signer()
    const { token, kid } = await signer.sign({ iss: 'https://acme.test', sub: 'alice', jti: 'j' })

    expect(signer.alg).toBe('RS256')
    expect(kid).toBe('2025-03-10')
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT', kid: '2025-03-10' })
    const { payload } = await jwtVerify(token, keySet(ring.jwks()), {
      issuer: 'https://acme.test',
      algorithms: ['RS256'],
    })
    expect(payload).toEqual({ iss: 'https://acme.test', sub: 'alice', jti: 'j' })
  })

  it('publishes exactly kty, n, e, kid, alg and use', async () => {
    const ring = await load()
    const [jwk, ...rest] = ring.jwks().keys
    expect(rest).toEqual([])
    expect(Object.keys(jwk ?? {}).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    expect(jwk).toMatchObject({ kty: 'RSA', kid: '2025-03-10', alg: 'RS256', use: 'sig' })
  })

  it('computes the JWKS and the signer once per load, not per call', async () => {
    const ring = await load()
    expect(ring.jwks()).toBe(ring.jwks())
    expect(ring.signer()).toBe(ring.signer())
  })

  it('reuses the stored key on a same-day restart', async () => {
    const first = await load()
    now = start + 10 * hour
    const second = await load()

    expect(second.activeKid()).toBe(first.activeKid())
    expect(second.jwks()).toEqual(first.jwks())
    expect(await store.listKeys('acme')).toHaveLength(1)
    const { token } = await first.signer().sign({ sub: 'alice' })
    await expect(jwtVerify(token, keySet(second.jwks()))).resolves.toBeDefined()
  })

  it('rotates on a restart on a later date and keeps the old key published for the grace', async () => {
    const first = await load()
    const { token: oldToken } = await first.signer().sign({ sub: 'alice' })

    now = start + day
    const second = await load()
    expect(second.activeKid()).toBe('2025-03-11')
    expect(kids(second)).toEqual(['2025-03-11', '2025-03-10'])
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    await expect(jwtVerify(oldToken, keySet(second.jwks()))).resolves.toBeDefined()

    now += graceMs - 1
    await reload(second)
    expect(kids(second)).toEqual(['2025-03-11', '2025-03-10'])

    now += 1
    await reload(second)
    expect(kids(second)).toEqual(['2025-03-11'])
    expect(store.get('acme', '2025-03-10')).toBeUndefined()
    await expect(jwtVerify(oldToken, keySet(second.jwks()))).rejects.toThrow()
  })

  it('keeps the old key on a later date when rotateOnRestart is false', async () => {
    await load()
    now = start + 3 * day
    const ring = await load({ rotateOnRestart: false })
    expect(ring.activeKid()).toBe('2025-03-10')
    expect(await store.listKeys('acme')).toHaveLength(1)
  })

  it('does not rotate on a reload, even on a later date', async () => {
    const ring = await load()
    now = start + day
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10')
    expect(await store.listKeys('acme')).toHaveLength(1)
  })

  it('converges on one key when two processes make the first key at once', async () => {
    const [a, b] = await Promise.all([load(), load()])
    expect(await store.listKeys('acme')).toHaveLength(1)
    expect(a.activeKid()).toBe('2025-03-10')
    expect(b.activeKid()).toBe(a.activeKid())
    expect(b.jwks()).toEqual(a.jwks())
    const { token } = await b.signer().sign({ sub: 'alice' })
    await expect(jwtVerify(token, keySet(a.jwks()))).resolves.toBeDefined()
  })

  it('adopts the winner of a lost insert: both generated, both raced to insert', async () => {
    const pairs = await Promise.all([
      generateRsaKey('acme', '2025-03-10', start),
      generateRsaKey('acme', '2025-03-10', start),
    ])
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    // Both generations end together, so both rings read an empty store before either inserts.
    const generateKey = async (): Promise<StoredKey> => {
      const pair = pairs.pop()
      if (pair === undefined) throw new Error('a third generation')
      await gate
      return pair
    }
    const insert = vi.spyOn(store, 'insertKeyIfAbsent')
    const rings = await Promise.all([
      loadKeyRing({ ...options(), generateKey }),
      loadKeyRing({ ...options(), generateKey }),
    ])
    const made = Promise.all(rings.map((ring) => ring.ensureKey()))
    await vi.waitFor(() => expect(pairs).toHaveLength(0))
    release()
    await made
    expect(
      await Promise.all(insert.mock.results.map((result) => result.value as Promise<boolean>)),
    ).toEqual(expect.arrayContaining([true, false]))
    expect(await store.listKeys('acme')).toHaveLength(1)
    expect(rings[1]?.jwks()).toEqual(rings[0]?.jwks())
    expect(rings[0]?.activeKid()).toBe('2025-03-10')
  })

  it('converges on one new key when two processes rotate at once', async () => {
    await load()
    now = start + day
    const [a, b] = await Promise.all([load(), load()])
    expect((await store.listKeys('acme')).map((key) => key.kid)).toEqual([
      '2025-03-10',
      '2025-03-11',
    ])
    expect(a.activeKid()).toBe('2025-03-11')
    expect(b.jwks()).toEqual(a.jwks())
  })

  it('names a second key of the same date YYYY-MM-DD.2 and never publishes a revoked key', async () => {
    await load()
    await store.updateKeyState('acme', '2025-03-10', 'revoked', undefined)
    now = start + hour
    const ring = await load()
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2'])
  })

  it('picks up a key rotated by another process on reload', async () => {
    const ring = await load()
    now = start + hour
    const rotated = await generateRsaKey('acme', '2025-03-10.2', now)
    await store.insertKeyIfAbsent(rotated)
    await store.updateKeyState('acme', '2025-03-10', 'retired', now)

    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2', '2025-03-10'])
    expect(ring.signer().alg).toBe('RS256')
    expect((await ring.signer().sign({})).kid).toBe('2025-03-10.2')
  })

  it('retires every active key but the newest', async () => {
    await store.insertKeyIfAbsent(await generateRsaKey('acme', '2025-03-09', start - day))
    await store.insertKeyIfAbsent(await generateRsaKey('acme', '2025-03-10', start - hour))
    const ring = await load()
    expect(ring.activeKid()).toBe('2025-03-10')
    expect(store.get('acme', '2025-03-09')).toMatchObject({ state: 'retired', retiredAt: now })
    expect(kids(ring)).toEqual(['2025-03-10', '2025-03-09'])
  })

  it('makes a new key on reload once the active one was revoked', async () => {
    const ring = await load()
    await store.updateKeyState('acme', '2025-03-10', 'revoked', undefined)
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2'])
  })

  it('keeps kids of different tenants apart', async () => {
    const acme = await load()
    const globex = await load({ tenant: 'globex' })
    expect(globex.activeKid()).toBe(acme.activeKid())
    expect(globex.jwks().keys[0]?.n).not.toBe(acme.jwks().keys[0]?.n)
    const { token } = await globex.signer().sign({ sub: 'bob' })
    await expect(jwtVerify(token, keySet(acme.jwks()))).rejects.toThrow()
  })
})

describe('loadKeyRing (HS256)', () => {
  it('creates no key', async () => {
    const ring = await load({ algorithm: 'HS256' })
    expect(ring.activeKid()).toBeUndefined()
    expect(ring.jwks()).toEqual({ keys: [] })
    expect(await store.listKeys('acme')).toEqual([])
    expect(() => ring.signer()).toThrow(expect.objectContaining({ code: 'ERR_NO_ACTIVE_KEY' }))
  })

  it('retires a key left active by a rollback from RS256 and unpublishes it after the grace', async () => {
    const rs = await load()
    const { token } = await rs.signer().sign({ sub: 'alice' })

    now = start + hour
    const hs = await load({ algorithm: 'HS256' })
    expect(hs.activeKid()).toBeUndefined()
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    expect(kids(hs)).toEqual(['2025-03-10'])
    await expect(jwtVerify(token, keySet(hs.jwks()))).resolves.toBeDefined()

    now += graceMs
    await reload(hs)
    expect(hs.jwks()).toEqual({ keys: [] })
    expect(await store.listKeys('acme')).toEqual([])
  })
})

describe('loadKeyRing (HS256 with idTokens)', () => {
  const idTokens = (options: Partial<LoadKeyRingOptions> = {}) =>
    load({ algorithm: 'HS256', idTokens: true, ...options })

  it('creates an RS256 key on load and signs with it, but has no RS256 period', async () => {
    const ring = await idTokens()
    expect(ring.algorithm).toBe('HS256')
    expect(ring.activeKid()).toBe('2025-03-10')
    expect(kids(ring)).toEqual(['2025-03-10'])
    expect(ring.rs256Since()).toBeUndefined()
    const signer = ring.signer()
    expect(signer.alg).toBe('RS256')
    expect(ring.signer()).toBe(signer)
    const { token, kid } = await signer.sign({ iss: 'https://acme.test', nonce: 'n' })
    expect(kid).toBe('2025-03-10')
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT', kid: '2025-03-10' })
    await expect(jwtVerify(token, keySet(ring.jwks()))).resolves.toBeDefined()
  })

  it('reuses its key on a same-day restart and rotates on a later date, with the grace', async () => {
    const first = await idTokens()
    now = start + 10 * hour
    expect((await idTokens()).activeKid()).toBe(first.activeKid())
    expect(await store.listKeys('acme')).toHaveLength(1)

    now = start + day
    const second = await idTokens()
    expect(second.activeKid()).toBe('2025-03-11')
    expect(kids(second)).toEqual(['2025-03-11', '2025-03-10'])
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    now += graceMs
    await reload(second)
    expect(kids(second)).toEqual(['2025-03-11'])
    expect(store.get('acme', '2025-03-10')).toBeUndefined()
  })

  it('rotates by age on reload, and the stable signer follows', async () => {
    const ring = await idTokens({ rotationMs: 30 * day })
    const signer = ring.signer()
    now = start + 30 * day
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-04-09')
    expect((await signer.sign({})).kid).toBe('2025-04-09')
    expect(ring.rs256Since()).toBeUndefined()
  })

  it('makes a new key on reload once the active one was revoked', async () => {
    const ring = await idTokens()
    await store.updateKeyState('acme', '2025-03-10', 'revoked', undefined)
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2'])
  })

  it('converges on one key when two processes load an empty store at once', async () => {
    const [a, b] = await Promise.all([idTokens(), idTokens()])
    expect(await store.listKeys('acme')).toHaveLength(1)
    expect(b.activeKid()).toBe(a.activeKid())
    expect(b.jwks()).toEqual(a.jwks())
  })

  it('encrypts its private key and refuses a wrong secret', async () => {
    const secret = 'test-key-encryption-secret-0123456789'
    await idTokens({ encryptionSecret: secret })
    expect(store.get('acme', '2025-03-10')?.privateKey).toMatch(/^enc:v1:/)
    expect(await codeOf(idTokens({ encryptionSecret: 'w'.repeat(32) }))).toBe('ERR_KEY_DECRYPT')
    expect(await codeOf(idTokens())).toBe('ERR_KEY_DECRYPT')
  })

  it('keeps the key of an RS256 tenant that switches to HS256 with idTokens, and back', async () => {
    const rs = await load()
    expect(rs.rs256Since()).toBe(start)

    now = start + hour
    const hs = await idTokens()
    expect(hs.activeKid()).toBe('2025-03-10')
    expect(store.get('acme', '2025-03-10')?.state).toBe('active')
    expect(hs.rs256Since()).toBeUndefined()

    now = start + 2 * hour
    const back = await load()
    expect(back.activeKid()).toBe('2025-03-10')
    expect(await store.listKeys('acme')).toHaveLength(1)
    // No record of the switch: the period starts at the creation of the key that still signs.
    expect(back.rs256Since()).toBe(start)
  })

  it('retires its key like a plain HS256 ring once idTokens is dropped', async () => {
    await idTokens()
    now = start + hour
    const plain = await load({ algorithm: 'HS256' })
    expect(plain.activeKid()).toBeUndefined()
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    expect(() => plain.signer()).toThrow(expect.objectContaining({ code: 'ERR_NO_ACTIVE_KEY' }))
  })

  it('refuses an idTokens that is not a boolean', async () => {
    await expect(idTokens({ idTokens: 'yes' as unknown as boolean })).rejects.toThrow(/idTokens/)
  })
})

describe('loadKeyRing (stored data)', () => {
  it('throws ERR_KEY_INVALID for a corrupted public JWK', async () => {
    const key = await generateRsaKey('acme', '2025-03-10', start)
    await store.insertKeyIfAbsent({ ...key, publicJwk: '{"kty":"RSA","n":' })
    expect(await codeOf(load())).toBe('ERR_KEY_INVALID')
  })

  it('throws ERR_KEY_INVALID for a private key that does not match its public half', async () => {
    const key = await generateRsaKey('acme', '2025-03-10', start)
    const other = await generateRsaKey('acme', '2025-03-10', start)
    await store.insertKeyIfAbsent({ ...key, privateKey: other.privateKey })
    expect(await codeOf(load())).toBe('ERR_KEY_INVALID')
  })

  it('throws ERR_KEY_INVALID for a row with an unknown state, before changing anything', async () => {
    const old = await generateRsaKey('acme', '2025-03-09', start - day)
    await store.insertKeyIfAbsent({ ...old, state: 'retired', retiredAt: start - graceMs })
    const key = await generateRsaKey('acme', '2025-03-10', start)
    await store.insertKeyIfAbsent({ ...key, state: 'lost' as 'active' })
    expect(await codeOf(load())).toBe('ERR_KEY_INVALID')
    expect(await store.listKeys('acme')).toHaveLength(2)
  })

  it('refuses keys of another tenant returned by a faulty store', async () => {
    const key = await generateRsaKey('globex', '2025-03-10', start)
    const faulty = Object.assign(new MemoryKeyStore(), {
      listKeys: () => Promise.resolve([key]),
    })
    expect(await codeOf(load({ store: faulty }))).toBe('ERR_KEY_INVALID')
  })

  it('keeps serving the last good keys when a reload fails', async () => {
    const ring = await load()
    const before = ring.jwks()
    const key = await generateRsaKey('acme', '2025-03-10.2', start)
    await store.insertKeyIfAbsent({ ...key, createdAt: start + 1, privateKey: 'garbage' })
    expect(await codeOf(ring.reload())).toBe('ERR_KEY_INVALID')
    expect(ring.jwks()).toBe(before)
    expect(ring.activeKid()).toBe('2025-03-10')
  })

  it('throws a TypeError naming a bad option', async () => {
    await expect(load({ graceMs: -1 })).rejects.toThrow(/graceMs/)
    await expect(load({ algorithm: 'ES256' as 'RS256' })).rejects.toThrow(TypeError)
  })
})

describe('loadKeyRing (rotation while running)', () => {
  it('rotates by age on reload once the active key is rotationMs old', async () => {
    const ring = await load({ rotationMs: 90 * day })
    const signer = ring.signer()
    now = start + 90 * day - 1
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-03-10')

    now = start + 90 * day
    await reload(ring)
    expect(ring.activeKid()).toBe('2025-06-08')
    expect(kids(ring)).toEqual(['2025-06-08', '2025-03-10'])
    expect(store.get('acme', '2025-03-10')).toMatchObject({ state: 'retired', retiredAt: now })
    expect((await signer.sign({ sub: 'alice' })).kid).toBe('2025-06-08')
  })

  it('rotates by age on load too, even without rotateOnRestart', async () => {
    await load()
    now = start + 91 * day
    const ring = await load({ rotateOnRestart: false, rotationMs: 90 * day })
    expect(ring.activeKid()).toBe('2025-06-09')
  })

  it('converges on one key when two running rings rotate by age at once', async () => {
    const [a, b] = await Promise.all([
      load({ rotationMs: 30 * day }),
      load({ rotationMs: 30 * day }),
    ])
    now = start + 30 * day
    await Promise.all([reload(a), reload(b)])
    expect((await store.listKeys('acme')).map((key) => key.kid)).toEqual([
      '2025-03-10',
      '2025-04-09',
    ])
    expect(a.activeKid()).toBe('2025-04-09')
    expect(b.activeKid()).toBe('2025-04-09')
    // Both retired the old key; the one whose retirement came second still publishes it.
    expect(kids(a)).toEqual(['2025-04-09', '2025-03-10'])
    expect(kids(b)).toEqual(['2025-04-09', '2025-03-10'])
  })

  it('hands out one stable signer that follows a rotation at once', async () => {
    const ring = await load()
    const signer = ring.signer()
    const { token: before } = await signer.sign({ sub: 'alice' })

    now = start + hour
    await rotateKey({ tenant: 'acme', store, now: () => now })
    await reload(ring)

    expect(ring.signer()).toBe(signer)
    const { token: after, kid } = await signer.sign({ sub: 'alice' })
    expect(kid).toBe('2025-03-10.2')
    expect(decodeProtectedHeader(after).kid).toBe('2025-03-10.2')
    await expect(jwtVerify(after, keySet(ring.jwks()))).resolves.toBeDefined()
    // The old key stays published for the grace, so tokens it signed keep verifying.
    await expect(jwtVerify(before, keySet(ring.jwks()))).resolves.toBeDefined()
  })

  it('keeps the same JWKS object across reloads that change nothing', async () => {
    const ring = await load()
    const doc = ring.jwks()
    now += hour
    await reload(ring)
    expect(ring.jwks()).toBe(doc)
  })

  it('never reuses a kid whose key was pruned, even on the same date', async () => {
    await load()
    now = start + hour
    const hs = await load({ algorithm: 'HS256' })
    now += graceMs
    await reload(hs)
    expect(await store.listKeys('acme')).toEqual([])

    const ring = await load()
    expect(ring.activeKid()).toBe('2025-03-10.2')
  })

  it('still publishes a key another replica retired just before it', async () => {
    const ring = await load({ rotationMs: 30 * day })
    now = start + 30 * day
    const retire = store.retireKey.bind(store)
    vi.spyOn(store, 'retireKey').mockImplementationOnce(async (tenant, kid, at) => {
      await retire(tenant, kid, at - 1_000) // another replica got there first
      return retire(tenant, kid, at)
    })
    await reload(ring)
    expect(kids(ring)).toEqual(['2025-04-09', '2025-03-10'])
    expect(store.get('acme', '2025-03-10')).toMatchObject({ retiredAt: now - 1_000 })
  })

  it('never undoes a revocation made between its read and its writes', async () => {
    await store.insertKeyIfAbsent(await generateRsaKey('acme', '2025-03-09', start - day))
    await store.insertKeyIfAbsent(await generateRsaKey('acme', '2025-03-10', start - hour))
    const list = store.listKeys.bind(store)
    vi.spyOn(store, 'listKeys').mockImplementationOnce(async (tenant) => {
      const rows = await list(tenant)
      // Another process revokes the older key right after this read.
      await store.updateKeyState('acme', '2025-03-09', 'revoked', start)
      return rows
    })
    const ring = await load({ rotateOnRestart: false })
    expect(store.get('acme', '2025-03-09')?.state).toBe('revoked')
    expect(kids(ring)).toEqual(['2025-03-10'])
  })
})

describe('loadKeyRing (encryption at rest)', () => {
  const secret = 'test-key-encryption-secret-0123456789'

  it('stores new private keys as envelopes and signs with them', async () => {
    const ring = await load({ encryptionSecret: secret })
    const stored = store.get('acme', '2025-03-10')
    expect(stored?.privateKey).toMatch(/^enc:v1:/)
    expect(stored?.publicJwk).toMatch(/^\{/)
    const { token } = await ring.signer().sign({ sub: 'alice' })
    await expect(jwtVerify(token, keySet(ring.jwks()))).resolves.toBeDefined()

    now += hour
    const again = await load({ encryptionSecret: secret })
    expect(again.jwks()).toEqual(ring.jwks())
    await expect(jwtVerify(token, keySet(again.jwks()))).resolves.toBeDefined()
  })

  it('refuses a wrong secret with ERR_KEY_DECRYPT and changes nothing, even when due to rotate', async () => {
    await load({ encryptionSecret: secret })
    const before = structuredClone([...store.rows.entries()])
    now = start + day

    const wrong = 'another-key-encryption-secret-0123456789'
    await expect(load({ encryptionSecret: wrong })).rejects.toMatchObject({
      code: 'ERR_KEY_DECRYPT',
      message: expect.stringContaining(
        'KEY_ENCRYPTION_SECRET does not decrypt the stored keys of tenant "acme"',
      ) as unknown,
    })
    expect(await codeOf(load({ encryptionSecret: wrong, algorithm: 'HS256' }))).toBe(
      'ERR_KEY_DECRYPT',
    )
    expect(await codeOf(load())).toBe('ERR_KEY_DECRYPT')
    expect([...store.rows.entries()]).toEqual(before)
  })

  it('encrypts keys stored in plaintext before the secret was set, keeping kid and public key', async () => {
    const plain = await load()
    const { token } = await plain.signer().sign({ sub: 'alice' })
    now += hour
    await load({ algorithm: 'HS256' })
    now += hour
    await rotateKey({ tenant: 'acme', store, now: () => now })
    expect([...store.rows.values()].map((key) => key.privateKey.startsWith('{'))).toEqual([
      true,
      true,
    ])

    const ring = await load({ encryptionSecret: secret })
    expect([...store.rows.values()].map((key) => key.privateKey.slice(0, 7))).toEqual([
      'enc:v1:',
      'enc:v1:',
    ])
    expect(ring.activeKid()).toBe('2025-03-10.2')
    expect(kids(ring)).toEqual(['2025-03-10.2', '2025-03-10'])
    await expect(jwtVerify(token, keySet(ring.jwks()))).resolves.toBeDefined()
    const { token: fresh } = await ring.signer().sign({ sub: 'alice' })
    await expect(jwtVerify(fresh, keySet(ring.jwks()))).resolves.toBeDefined()
    // Without the secret they no longer load.
    expect(await codeOf(load())).toBe('ERR_KEY_DECRYPT')
  })

  it('refuses an envelope moved onto another key (the AAD binds tenant and kid)', async () => {
    await load({ encryptionSecret: secret })
    now = start + hour
    await rotateKey({ tenant: 'acme', store, now: () => now, encryptionSecret: secret })
    const first = store.get('acme', '2025-03-10')
    const second = store.get('acme', '2025-03-10.2')
    if (first === undefined || second === undefined) throw new Error('keys missing')
    store.rows.set('acme\u00002025-03-10.2', { ...second, privateKey: first.privateKey })
    expect(await codeOf(load({ encryptionSecret: secret }))).toBe('ERR_KEY_DECRYPT')
  })

  it('refuses a secret shorter than 32 characters', async () => {
    expect(await codeOf(load({ encryptionSecret: 'short' }))).toBe('ERR_SECRET_TOO_SHORT')
  })

  it('verifyStoredKeys finds a wrong secret for a tenant without writing anything', async () => {
    await load({ encryptionSecret: secret })
    await load({ tenant: 'globex' })
    const before = structuredClone([...store.rows.entries()])
    await expect(
      verifyStoredKeys({ tenant: 'acme', store, encryptionSecret: secret }),
    ).resolves.toBeUndefined()
    // Plaintext keys open with any secret: they are encrypted by the next load.
    await expect(
      verifyStoredKeys({ tenant: 'globex', store, encryptionSecret: 'w'.repeat(32) }),
    ).resolves.toBeUndefined()
    expect(
      await codeOf(verifyStoredKeys({ tenant: 'acme', store, encryptionSecret: 'w'.repeat(32) })),
    ).toBe('ERR_KEY_DECRYPT')
    expect(await codeOf(verifyStoredKeys({ tenant: 'acme', store }))).toBe('ERR_KEY_DECRYPT')
    expect([...store.rows.entries()]).toEqual(before)
  })
})
