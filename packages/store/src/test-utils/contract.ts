import type { StoredKey } from '@tessera/keys'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StoreError } from '../errors.js'
import type { Store } from '../store.js'

const t0 = Date.UTC(2025, 2, 10, 9)
const minute = 60_000

/** A key row; the store treats the JWK texts as opaque, so they need not be real keys. */
export function storedKey(fields: Partial<StoredKey> = {}): StoredKey {
  const kid = fields.kid ?? '2025-03-10'
  return {
    tenant: 'acme',
    kid,
    alg: 'RS256',
    publicJwk: JSON.stringify({ kty: 'RSA', n: `n-${kid}`, e: 'AQAB' }),
    privateKey: JSON.stringify({ kty: 'RSA', n: `n-${kid}`, e: 'AQAB', d: `d-${kid}` }),
    createdAt: t0,
    state: 'active',
    ...fields,
  }
}

/**
 * The behaviour every Store adapter owes the ports of @tessera/keys and @tessera/grants. Each
 * adapter's test file calls this with a factory that opens a fresh, empty store.
 */
export function describeStoreContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store: contract`, () => {
    let store: Store

    beforeEach(async () => {
      store = await open()
    })

    afterEach(async () => {
      await store.close()
    })

    describe('keys', () => {
      it('inserts a (tenant, kid) once; a second insert returns false and keeps the first', async () => {
        const first = storedKey()
        const second = storedKey({ publicJwk: '{"other":true}', createdAt: t0 + 1 })
        expect(await store.keys.insertKeyIfAbsent(first)).toBe(true)
        expect(await store.keys.insertKeyIfAbsent(second)).toBe(false)
        expect(await store.keys.listKeys('acme')).toEqual([first])
      })

      it('round-trips every field, with and without retiredAt', async () => {
        const retired = storedKey({ kid: '2025-03-09', state: 'retired', retiredAt: t0 - minute })
        const active = storedKey()
        await store.keys.insertKeyIfAbsent(retired)
        await store.keys.insertKeyIfAbsent(active)
        const listed = await store.keys.listKeys('acme')
        expect(listed).toStrictEqual([retired, active])
        expect(listed[1]).not.toHaveProperty('retiredAt')
      })

      it('lists keys oldest first, then by kid', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-12', createdAt: t0 + 2 }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10.2', createdAt: t0 }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-11', createdAt: t0 + 1 }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 }))
        const kids = (await store.keys.listKeys('acme')).map((key) => key.kid)
        expect(kids).toEqual(['2025-03-10', '2025-03-10.2', '2025-03-11', '2025-03-12'])
      })

      it('keeps tenants apart: the same kid names a key in each', async () => {
        const acme = storedKey({ tenant: 'acme' })
        const globex = storedKey({ tenant: 'globex', publicJwk: '{"globex":true}' })
        expect(await store.keys.insertKeyIfAbsent(acme)).toBe(true)
        expect(await store.keys.insertKeyIfAbsent(globex)).toBe(true)
        expect(await store.keys.listKeys('acme')).toEqual([acme])
        expect(await store.keys.listKeys('globex')).toEqual([globex])
        expect(await store.keys.listKeys('initech')).toEqual([])

        await store.keys.updateKeyState('acme', acme.kid, 'revoked', undefined)
        await store.keys.deleteKey('globex', globex.kid)
        expect(await store.keys.listKeys('acme')).toMatchObject([{ state: 'revoked' }])
        expect(await store.keys.listKeys('globex')).toEqual([])
      })

      it('updates the state and retiredAt of one key', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 + 1 }))

        await store.keys.updateKeyState('acme', '2025-03-09', 'retired', t0 + minute)
        expect(await store.keys.listKeys('acme')).toMatchObject([
          { kid: '2025-03-09', state: 'retired', retiredAt: t0 + minute },
          { kid: '2025-03-10', state: 'active' },
        ])

        await store.keys.updateKeyState('acme', '2025-03-09', 'revoked', undefined)
        const [revoked] = await store.keys.listKeys('acme')
        expect(revoked?.state).toBe('revoked')
        expect(revoked).not.toHaveProperty('retiredAt')
      })

      it('deletes one key, public and private parts', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 + 1 }))
        await store.keys.deleteKey('acme', '2025-03-09')
        expect((await store.keys.listKeys('acme')).map((key) => key.kid)).toEqual(['2025-03-10'])
        // A deleted kid is free again: nothing of the old row lingers.
        expect(await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))).toBe(true)
      })

      it('treats an update or delete of a missing key as a no-op', async () => {
        await store.keys.updateKeyState('acme', 'missing', 'revoked', undefined)
        await store.keys.deleteKey('acme', 'missing')
        expect(await store.keys.listKeys('acme')).toEqual([])
      })

      it('hands out copies: changing a listed key changes nothing stored', async () => {
        const key = storedKey()
        await store.keys.insertKeyIfAbsent(key)
        key.state = 'revoked'
        const [listed] = await store.keys.listKeys('acme')
        if (listed) listed.state = 'retired'
        expect(await store.keys.listKeys('acme')).toMatchObject([{ state: 'active' }])
      })
    })

    describe('throttle', () => {
      const windowMs = 15 * minute

      it('counts failures within one window and keeps its end', async () => {
        expect(await store.throttle.recordFailure('acme:alice', t0, windowMs)).toEqual({
          count: 1,
          resetAt: t0 + windowMs,
        })
        expect(await store.throttle.recordFailure('acme:alice', t0 + minute, windowMs)).toEqual({
          count: 2,
          resetAt: t0 + windowMs,
        })
        expect(await store.throttle.getFailures('acme:alice', t0 + 2 * minute)).toEqual({
          count: 2,
          resetAt: t0 + windowMs,
        })
      })

      it('starts a new window at count 1 once the stored one has ended', async () => {
        await store.throttle.recordFailure('acme:alice', t0, windowMs)
        await store.throttle.recordFailure('acme:alice', t0, windowMs)
        const later = t0 + windowMs
        expect(await store.throttle.getFailures('acme:alice', later)).toEqual({
          count: 0,
          resetAt: later,
        })
        expect(await store.throttle.recordFailure('acme:alice', later, windowMs)).toEqual({
          count: 1,
          resetAt: later + windowMs,
        })
      })

      it('reports no failures for a key never seen', async () => {
        expect(await store.throttle.getFailures('acme:nobody', t0)).toEqual({
          count: 0,
          resetAt: t0,
        })
      })

      it('keeps keys apart and clears one', async () => {
        await store.throttle.recordFailure('acme:alice', t0, windowMs)
        await store.throttle.recordFailure('ip:192.0.2.1', t0, windowMs)
        await store.throttle.clearFailures('acme:alice')
        await store.throttle.clearFailures('acme:never-seen')
        expect((await store.throttle.getFailures('acme:alice', t0)).count).toBe(0)
        expect((await store.throttle.getFailures('ip:192.0.2.1', t0)).count).toBe(1)
        expect((await store.throttle.recordFailure('acme:alice', t0, windowMs)).count).toBe(1)
      })

      it('loses no failure among concurrent ones', async () => {
        const counts = await Promise.all(
          Array.from({ length: 25 }, () =>
            store.throttle.recordFailure('acme:alice', t0, windowMs),
          ),
        )
        expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 25 }, (_, i) => i + 1),
        )
        expect((await store.throttle.getFailures('acme:alice', t0)).count).toBe(25)
      })

      it('throws a TypeError for a window that is not positive', async () => {
        await expect(store.throttle.recordFailure('acme:alice', t0, 0)).rejects.toThrow(TypeError)
      })
    })

    describe('lifecycle', () => {
      it('answers ping while open and refuses any use after close', async () => {
        await expect(store.ping()).resolves.toBeUndefined()
        await store.close()
        await store.close()
        for (const use of [
          () => store.ping(),
          () => store.keys.listKeys('acme'),
          () => store.throttle.getFailures('acme:alice', t0),
        ]) {
          const error: unknown = await use().catch((e: unknown) => e)
          expect(error).toBeInstanceOf(StoreError)
          expect(error).toMatchObject({ code: 'ERR_STORE_CLOSED' })
        }
      })
    })
  })
}
