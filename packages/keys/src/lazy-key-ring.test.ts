import { decodeProtectedHeader } from 'jose'
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { generateRsaKey } from './generate.js'
import { loadKeyRing, type KeyRingEvent, type LoadKeyRingOptions } from './key-ring.js'
import type { StoredKey } from './ports.js'
import { createLimiter } from './internal/limiter.js'
import { MemoryKeyStore } from './test-utils/memory-key-store.js'

const hour = 3_600_000
const day = 24 * hour
const start = Date.UTC(2025, 2, 10, 9)

let store: MemoryKeyStore
let now: number
/** Real pairs made once: a generator hands them out, renamed by the ring. */
let pairs: StoredKey[]

beforeAll(async () => {
  pairs = await Promise.all([1, 2, 3].map(() => generateRsaKey('acme', '2025-03-10', start)))
})

beforeEach(() => {
  store = new MemoryKeyStore()
  now = start
})

interface Deferred {
  promise: Promise<void>
  resolve: () => void
  reject: (error: Error) => void
}

function deferred(): Deferred {
  let resolve = (): void => undefined
  let reject = (_error: Error): void => undefined
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** A generator that waits for `release()` and counts its calls. */
function gatedGenerator(): {
  generateKey: NonNullable<LoadKeyRingOptions['generateKey']>
  calls: () => number
  release: () => void
  fail: (error: Error) => void
} {
  let calls = 0
  let gate = deferred()
  return {
    generateKey: async () => {
      const pair = pairs[calls++ % pairs.length]
      if (pair === undefined) throw new Error('no pair')
      await gate.promise
      return pair
    },
    calls: () => calls,
    release: () => gate.resolve(),
    fail: (error) => {
      gate.reject(error)
      gate = deferred()
    },
  }
}

function options(fields: Partial<LoadKeyRingOptions> = {}): LoadKeyRingOptions {
  return {
    tenant: 'acme',
    algorithm: 'RS256',
    store,
    now: () => now,
    rotateOnRestart: true,
    graceMs: 4 * hour,
    ...fields,
  }
}

describe('a key ring makes its first key on first use', () => {
  it('loads without generating or storing anything, and publishes nothing yet', async () => {
    const gen = gatedGenerator()
    const ring = await loadKeyRing(options({ generateKey: gen.generateKey }))
    expect(ring.activeKid()).toBeUndefined()
    expect(ring.jwks()).toEqual({ keys: [] })
    expect(ring.rs256Since()).toBeUndefined()
    await ring.maintain()
    expect(gen.calls()).toBe(0)
    expect(store.rows.size).toBe(0)
  })

  it('makes one key for 50 signatures and JWKS requests that arrive together', async () => {
    const gen = gatedGenerator()
    const events: KeyRingEvent[] = []
    const ring = await loadKeyRing(
      options({ generateKey: gen.generateKey, onEvent: (event) => events.push(event) }),
    )
    const signer = ring.signer()
    const signing = Array.from({ length: 50 }, (_, i) => signer.sign({ sub: `user-${i}` }))
    const jwks = Array.from({ length: 50 }, () => ring.ensureKey().then(() => ring.jwks()))
    await vi.waitFor(() => expect(gen.calls()).toBe(1))
    gen.release()
    const tokens = await Promise.all(signing)
    const docs = await Promise.all(jwks)
    expect(gen.calls()).toBe(1)
    expect(store.rows.size).toBe(1)
    expect(new Set(tokens.map((token) => decodeProtectedHeader(token.token).kid))).toEqual(
      new Set(['2025-03-10']),
    )
    expect(new Set(docs)).toEqual(new Set([ring.jwks()]))
    expect(ring.jwks().keys.map((key) => key.kid)).toEqual(['2025-03-10'])
    expect(events).toEqual([
      {
        type: 'key-made',
        tenant: 'acme',
        reason: 'first',
        kid: '2025-03-10',
        previousKid: undefined,
      },
    ])
  })

  it('adopts a key another process made since the load, without generating', async () => {
    const gen = gatedGenerator()
    const ring = await loadKeyRing(options({ generateKey: gen.generateKey }))
    const other = await loadKeyRing(options())
    await other.ensureKey()
    await ring.ensureKey()
    expect(gen.calls()).toBe(0)
    expect(ring.activeKid()).toBe(other.activeKid())
  })

  it('rejects every waiting caller when generation fails, caches nothing, and retries on the next need', async () => {
    const gen = gatedGenerator()
    const events: KeyRingEvent[] = []
    const ring = await loadKeyRing(
      options({ generateKey: gen.generateKey, onEvent: (event) => events.push(event) }),
    )
    const waiting = [ring.ensureKey(), ring.signer().sign({ sub: 'alice' })]
    await vi.waitFor(() => expect(gen.calls()).toBe(1))
    gen.fail(new Error('thread pool on fire'))
    for (const result of await Promise.allSettled(waiting)) {
      expect(result).toMatchObject({
        status: 'rejected',
        reason: { message: 'thread pool on fire' },
      })
    }
    expect(events).toMatchObject([{ type: 'key-make-failed', tenant: 'acme', reason: 'first' }])
    expect(store.rows.size).toBe(0)

    const again = ring.signer().sign({ sub: 'alice' })
    await vi.waitFor(() => expect(gen.calls()).toBe(2))
    gen.release()
    expect((await again).kid).toBe('2025-03-10')
  })

  it('does the same for the ID-token key of an HS256 ring with idTokens, and nothing without', async () => {
    const gen = gatedGenerator()
    gen.release()
    const plain = await loadKeyRing(options({ algorithm: 'HS256', generateKey: gen.generateKey }))
    await plain.ensureKey()
    expect(gen.calls()).toBe(0)
    const oidc = await loadKeyRing(
      options({ algorithm: 'HS256', idTokens: true, generateKey: gen.generateKey }),
    )
    expect(oidc.activeKid()).toBeUndefined()
    expect((await oidc.signer().sign({ sub: 'alice' })).kid).toBe('2025-03-10')
    expect(gen.calls()).toBe(1)
  })

  it('stops making keys once its signal is aborted: nothing is written', async () => {
    const gen = gatedGenerator()
    const controller = new AbortController()
    const ring = await loadKeyRing(
      options({ generateKey: gen.generateKey, signal: controller.signal }),
    )
    const waiting = ring.ensureKey()
    await vi.waitFor(() => expect(gen.calls()).toBe(1))
    controller.abort()
    gen.release()
    await expect(waiting).rejects.toBeDefined()
    await ring.idle()
    expect(store.rows.size).toBe(0)
  })
})

describe('a key ring rotates in the background', () => {
  async function seeded(fields: Partial<LoadKeyRingOptions> = {}): Promise<string> {
    const first = await loadKeyRing(options(fields))
    await first.ensureKey()
    return first.activeKid() ?? ''
  }

  it('on a restart on a later date: the old key signs until the new one is stored', async () => {
    const old = await seeded()
    now = start + day
    const gen = gatedGenerator()
    const events: KeyRingEvent[] = []
    const ring = await loadKeyRing(
      options({ generateKey: gen.generateKey, onEvent: (event) => events.push(event) }),
    )
    // The load returned with the generation still blocked: the old key serves meanwhile.
    await vi.waitFor(() => expect(gen.calls()).toBe(1))
    expect(ring.activeKid()).toBe(old)
    expect((await ring.signer().sign({ sub: 'alice' })).kid).toBe(old)
    expect(store.rows.size).toBe(1)

    gen.release()
    await ring.idle()
    expect((await ring.signer().sign({ sub: 'alice' })).kid).toBe('2025-03-11')
    expect(ring.jwks().keys.map((key) => key.kid)).toEqual(['2025-03-11', old])
    expect(store.get('acme', old)).toMatchObject({ state: 'retired', retiredAt: start + day })
    expect(events).toEqual([
      { type: 'key-made', tenant: 'acme', reason: 'restart', kid: '2025-03-11', previousKid: old },
    ])
  })

  it('adopts the key another process rotated to while it generated, storing no second one', async () => {
    await seeded()
    now = start + day
    const gen = gatedGenerator()
    const ring = await loadKeyRing(options({ generateKey: gen.generateKey }))
    await vi.waitFor(() => expect(gen.calls()).toBe(1))
    const replica = await loadKeyRing(options())
    await replica.idle()
    const insert = vi.spyOn(store, 'insertKeyIfAbsent')
    gen.release()
    await ring.idle()
    expect(insert).not.toHaveBeenCalled()
    expect(ring.activeKid()).toBe(replica.activeKid())
    expect([...store.rows.values()].map((key) => key.kid)).toEqual(['2025-03-10', '2025-03-11'])
  })

  it('retries a failed restart rotation on the next maintain, never caching the failure', async () => {
    await seeded()
    now = start + day
    const gen = gatedGenerator()
    const ring = await loadKeyRing(options({ generateKey: gen.generateKey }))
    await vi.waitFor(() => expect(gen.calls()).toBe(1))
    gen.fail(new Error('no'))
    await ring.idle()
    expect(ring.activeKid()).toBe('2025-03-10')
    const maintained = ring.maintain()
    await vi.waitFor(() => expect(gen.calls()).toBe(2))
    gen.release()
    await maintained
    expect(ring.activeKid()).toBe('2025-03-11')
  })

  it('by age from what it knows: maintain queries nothing until a key is due', async () => {
    await seeded()
    const gen = gatedGenerator()
    gen.release()
    const ring = await loadKeyRing(options({ rotationMs: 30 * day, generateKey: gen.generateKey }))
    store.calls.clear()
    now = start + 29 * day
    await ring.maintain()
    expect([...store.calls.values()].reduce((a, b) => a + b, 0)).toBe(0)
    now = start + 30 * day
    await ring.maintain()
    expect(gen.calls()).toBe(1)
    expect(ring.activeKid()).toBe('2025-04-09')
  })

  it('unpublishes and prunes a retired key once its grace ends, on maintain', async () => {
    await seeded()
    now = start + day
    const ring = await loadKeyRing(options())
    await ring.idle()
    expect(ring.jwks().keys).toHaveLength(2)
    store.calls.clear()
    now = start + day + 4 * hour - 1
    await ring.maintain()
    expect(store.calls.size).toBe(0)
    now = start + day + 4 * hour
    await ring.maintain()
    expect(ring.jwks().keys.map((key) => key.kid)).toEqual(['2025-03-11'])
    expect(store.get('acme', '2025-03-10')).toBeUndefined()
  })
})

describe('the generation limiter', () => {
  it('runs at most its concurrency at once, urgent tasks first, and drops aborted waiters', async () => {
    const limiter = createLimiter(2)
    const order: string[] = []
    const gates = new Map<string, Deferred>()
    const task = (name: string) => async () => {
      order.push(name)
      const gate = deferred()
      gates.set(name, gate)
      await gate.promise
      return name
    }
    const controller = new AbortController()
    const runs = [
      limiter.run(task('bg1'), { urgent: false }),
      limiter.run(task('bg2'), { urgent: false }),
      limiter.run(task('bg3'), { urgent: false }),
      limiter.run(task('gone'), { urgent: false, signal: controller.signal }),
      limiter.run(task('first'), { urgent: true }),
    ]
    expect(limiter.running).toBe(2)
    expect(limiter.queued).toBe(3)
    controller.abort(new Error('closed'))
    await expect(runs[3]).rejects.toThrow('closed')
    gates.get('bg1')?.resolve()
    await vi.waitFor(() => expect(order).toEqual(['bg1', 'bg2', 'first']))
    expect(limiter.running).toBe(2)
    gates.get('bg2')?.resolve()
    await vi.waitFor(() => expect(order).toHaveLength(4))
    gates.get('first')?.resolve()
    gates.get('bg3')?.resolve()
    expect(await Promise.all([runs[0], runs[1], runs[2], runs[4]])).toEqual([
      'bg1',
      'bg2',
      'bg3',
      'first',
    ])
    expect(order).toEqual(['bg1', 'bg2', 'first', 'bg3'])
  })
})

describe('a loaded key signs on first use', () => {
  const stored = (): StoredKey => {
    const pair = pairs[0]
    if (pair === undefined) throw new Error('no pair')
    return { ...pair, tenant: 'acme', kid: '2025-03-10', createdAt: start }
  }

  it('reads and imports the private key once, at the first of many signatures', async () => {
    await store.insertKeyIfAbsent(stored())
    const ring = await loadKeyRing(options({ keys: [stored()], rotateOnRestart: false }))
    // The load was given the rows: it read no key and holds no private key yet.
    expect(store.calls.get('listKeys') ?? 0).toBe(0)
    const tokens = await Promise.all(
      Array.from({ length: 20 }, (_, index) => ring.signer().sign({ sub: `user-${index}` })),
    )
    expect(tokens.map(({ token }) => decodeProtectedHeader(token).kid)).toEqual(
      Array.from({ length: 20 }, () => '2025-03-10'),
    )
    expect(store.calls.get('listKeys')).toBe(1)
    await ring.signer().sign({ sub: 'later' })
    expect(store.calls.get('listKeys')).toBe(1)
  })

  it('fails the signature, not the process, when the key was revoked before it first signed', async () => {
    await store.insertKeyIfAbsent(stored())
    const ring = await loadKeyRing(options({ rotateOnRestart: false }))
    expect(ring.activeKid()).toBe('2025-03-10')
    await store.updateKeyState('acme', '2025-03-10', 'revoked', undefined)
    await expect(ring.signer().sign({ sub: 'x' })).rejects.toMatchObject({
      code: 'ERR_NO_ACTIVE_KEY',
    })
    // The reload takes the revocation: no active key, nothing published.
    await ring.reload()
    expect(ring.activeKid()).toBeUndefined()
    expect(ring.jwks().keys).toEqual([])
  })

  it('opens the given keys at load unless the caller verified them', async () => {
    const corrupt = { ...stored(), privateKey: '{"kty":"RSA"}' }
    await store.insertKeyIfAbsent(corrupt)
    await expect(
      loadKeyRing(options({ keys: [corrupt], rotateOnRestart: false })),
    ).rejects.toMatchObject({ code: 'ERR_KEY_INVALID' })
    // keysVerified: the caller ran verifyStoredKeys on these rows; the load trusts it.
    const ring = await loadKeyRing(
      options({ keys: [corrupt], keysVerified: true, rotateOnRestart: false }),
    )
    expect(ring.activeKid()).toBe('2025-03-10')
    await expect(ring.signer().sign({ sub: 'x' })).rejects.toMatchObject({
      code: 'ERR_KEY_INVALID',
    })
  })
})
