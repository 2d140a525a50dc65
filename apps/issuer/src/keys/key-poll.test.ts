import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateRsaKey, loadKeyRing, revokeKey, rotateKey } from '@tessera/keys'
import type { KeyRing, KeyStore } from '@tessera/keys'
import { openStore } from '@tessera/store'
import type { Store } from '@tessera/store'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createKeyPoll } from './key-poll.js'

const TENANTS = 300
const monday = Date.UTC(2026, 10, 23, 8)

let dir: string
let store: Store
let calls: Map<string, number>

/** The store's keys as the poll sees them, every call counted by method. */
function counted(keys: KeyStore): KeyStore {
  return new Proxy(keys, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver)
      if (typeof value !== 'function' || typeof name !== 'string') return value
      return (...args: unknown[]): unknown => {
        calls.set(name, (calls.get(name) ?? 0) + 1)
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-key-poll-'))
  store = await openStore(`sqlite:${join(dir, 'keys.db')}`)
  calls = new Map()
})

afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the key poll', () => {
  it(`makes one store query per interval for ${TENANTS} tenants, and reloads only the changed`, async () => {
    const pair = await generateRsaKey('seed', '2026-11-23', monday)
    const names = Array.from({ length: TENANTS }, (_, i) => `t${i}`)
    for (const tenant of names) await store.keys.insertKeyIfAbsent({ ...pair, tenant })
    const keys = counted(store.keys)
    const poll = createKeyPoll({
      store: keys,
      rings: () => rings,
      logger: pino({ level: 'silent' }),
    })
    await poll.begin()
    const stored = await keys.listKeysOfTenants(names)
    const rings: KeyRing[] = await Promise.all(
      names.map((tenant) =>
        loadKeyRing({
          tenant,
          algorithm: 'RS256',
          store: keys,
          keys: stored.filter((key) => key.tenant === tenant),
          now: () => monday + 3_600_000,
          rotateOnRestart: true,
          graceMs: 4 * 3_600_000,
          rotationMs: 90 * 86_400_000,
        }),
      ),
    )
    calls.clear()

    await poll.poll()
    await poll.poll()
    expect(Object.fromEntries(calls)).toEqual({ keyChangesSince: 2 })

    // Another process rotates one tenant and revokes another's key.
    const rotated = await rotateKey({
      tenant: 't7',
      store: store.keys,
      now: () => monday + 7_200_000,
    })
    await revokeKey({
      tenant: 't9',
      kid: '2026-11-23',
      algorithm: 'RS256',
      store: store.keys,
      now: () => monday + 7_200_000,
    })
    calls.clear()
    await poll.poll()
    await Promise.all(rings.map((ring) => ring.idle()))
    expect(calls.get('keyChangesSince')).toBe(1)
    // Only the two changed rings read their keys again.
    expect(calls.get('listKeys')).toBe(2)
    expect(calls.has('listKeysOfTenants')).toBe(false)
    expect(rings[7]?.activeKid()).toBe(rotated.kid)
    expect(rings[9]?.jwks().keys.map((key) => key.kid)).not.toContain('2026-11-23')
    expect(rings[9]?.activeKid()).not.toBe('2026-11-23')
    expect(rings[8]?.activeKid()).toBe('2026-11-23')

    calls.clear()
    await poll.poll()
    expect(Object.fromEntries(calls)).toEqual({ keyChangesSince: 1 })
  })
})
