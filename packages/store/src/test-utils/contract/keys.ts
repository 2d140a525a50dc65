import { describe, expect, it } from 'vitest'
import { day, freshStoreEach, minute, storedKey, t0, type OpenStore } from './fixtures.js'

/** The KeyStore port of @tessera/keys: rows by (tenant, kid), states, pruned kids, the change feed. */
export function keysContract(open: OpenStore): void {
  describe('keys', () => {
    const store = freshStoreEach(open)

    it('inserts a (tenant, kid) once; a second insert returns false and keeps the first', async () => {
      const first = storedKey()
      const second = storedKey({ publicJwk: '{"other":true}', createdAt: t0 + 1 })
      expect(await store().keys.insertKeyIfAbsent(first)).toBe(true)
      expect(await store().keys.insertKeyIfAbsent(second)).toBe(false)
      expect(await store().keys.listKeys('acme')).toEqual([first])
    })

    it('round-trips every field, with and without retiredAt', async () => {
      const retired = storedKey({ kid: '2025-03-09', state: 'retired', retiredAt: t0 - minute })
      const active = storedKey()
      await store().keys.insertKeyIfAbsent(retired)
      await store().keys.insertKeyIfAbsent(active)
      const listed = await store().keys.listKeys('acme')
      expect(listed).toStrictEqual([retired, active])
      expect(listed[1]).not.toHaveProperty('retiredAt')
    })

    it('lists keys oldest first, then by kid', async () => {
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-12', createdAt: t0 + 2 }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10.2', createdAt: t0 }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-11', createdAt: t0 + 1 }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 }))
      const kids = (await store().keys.listKeys('acme')).map((key) => key.kid)
      expect(kids).toEqual(['2025-03-10', '2025-03-10.2', '2025-03-11', '2025-03-12'])
    })

    it('keeps tenants apart: the same kid names a key in each', async () => {
      const acme = storedKey({ tenant: 'acme' })
      const globex = storedKey({ tenant: 'globex', publicJwk: '{"globex":true}' })
      expect(await store().keys.insertKeyIfAbsent(acme)).toBe(true)
      expect(await store().keys.insertKeyIfAbsent(globex)).toBe(true)
      expect(await store().keys.listKeys('acme')).toEqual([acme])
      expect(await store().keys.listKeys('globex')).toEqual([globex])
      expect(await store().keys.listKeys('initech')).toEqual([])

      await store().keys.updateKeyState('acme', acme.kid, 'revoked', undefined)
      await store().keys.deleteKey('globex', globex.kid)
      expect(await store().keys.listKeys('acme')).toMatchObject([{ state: 'revoked' }])
      expect(await store().keys.listKeys('globex')).toEqual([])
    })

    it('updates the state and retiredAt of one key', async () => {
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 + 1 }))

      await store().keys.updateKeyState('acme', '2025-03-09', 'retired', t0 + minute)
      expect(await store().keys.listKeys('acme')).toMatchObject([
        { kid: '2025-03-09', state: 'retired', retiredAt: t0 + minute },
        { kid: '2025-03-10', state: 'active' },
      ])

      await store().keys.updateKeyState('acme', '2025-03-09', 'revoked', undefined)
      const [revoked] = await store().keys.listKeys('acme')
      expect(revoked?.state).toBe('revoked')
      expect(revoked).not.toHaveProperty('retiredAt')
    })

    it('deletes one key, public and private parts', async () => {
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 + 1 }))
      await store().keys.deleteKey('acme', '2025-03-09')
      expect((await store().keys.listKeys('acme')).map((key) => key.kid)).toEqual(['2025-03-10'])
      // Nothing of the old row lingers; the store would take the kid again (the key ring never
      // asks, since it chooses kids past listPrunedKids).
      expect(await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))).toBe(true)
    })

    it('remembers the kids of deleted keys, per tenant, sorted', async () => {
      expect(await store().keys.listPrunedKids('acme')).toEqual([])
      for (const kid of ['2025-03-10.2', '2025-03-09', '2025-03-10']) {
        await store().keys.insertKeyIfAbsent(storedKey({ kid }))
      }
      await store().keys.insertKeyIfAbsent(storedKey({ tenant: 'globex', kid: '2025-03-08' }))
      await store().keys.deleteKey('acme', '2025-03-10.2')
      await store().keys.deleteKey('acme', '2025-03-09')
      await store().keys.deleteKey('acme', 'missing')
      await store().keys.deleteKey('globex', '2025-03-08')
      expect(await store().keys.listPrunedKids('acme')).toEqual(['2025-03-09', '2025-03-10.2'])
      expect(await store().keys.listPrunedKids('globex')).toEqual(['2025-03-08'])
      // A kid deleted twice (re-inserted in between) is listed once.
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
      await store().keys.deleteKey('acme', '2025-03-09')
      expect(await store().keys.listPrunedKids('acme')).toEqual(['2025-03-09', '2025-03-10.2'])
    })

    it('retires a key only while it is active', async () => {
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-08' }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09', state: 'revoked' }))
      await store().keys.insertKeyIfAbsent(
        storedKey({ kid: '2025-03-10', state: 'retired', retiredAt: t0 }),
      )
      expect(await store().keys.retireKey('acme', '2025-03-08', t0 + minute)).toBe(true)
      expect(await store().keys.retireKey('acme', '2025-03-08', t0 + 2 * minute)).toBe(false)
      expect(await store().keys.retireKey('acme', '2025-03-09', t0 + minute)).toBe(false)
      expect(await store().keys.retireKey('acme', '2025-03-10', t0 + minute)).toBe(false)
      expect(await store().keys.retireKey('acme', 'missing', t0 + minute)).toBe(false)
      expect(await store().keys.retireKey('globex', '2025-03-10', t0 + minute)).toBe(false)
      expect(await store().keys.listKeys('acme')).toMatchObject([
        { kid: '2025-03-08', state: 'retired', retiredAt: t0 + minute },
        { kid: '2025-03-09', state: 'revoked' },
        { kid: '2025-03-10', state: 'retired', retiredAt: t0 },
      ])
      const [, revoked] = await store().keys.listKeys('acme')
      expect(revoked).not.toHaveProperty('retiredAt')
    })

    it('replaces a private key only if it still holds the expected text', async () => {
      const key = storedKey()
      await store().keys.insertKeyIfAbsent(key)
      expect(await store().keys.updatePrivateKey('acme', key.kid, 'stale', 'enc:v1:x')).toBe(false)
      expect(await store().keys.updatePrivateKey('acme', key.kid, key.privateKey, 'enc:v1:a')).toBe(
        true,
      )
      expect(await store().keys.updatePrivateKey('acme', key.kid, key.privateKey, 'enc:v1:b')).toBe(
        false,
      )
      expect(await store().keys.updatePrivateKey('acme', 'missing', '', 'x')).toBe(false)
      expect(await store().keys.listKeys('acme')).toEqual([{ ...key, privateKey: 'enc:v1:a' }])
    })

    it('treats an update or delete of a missing key as a no-op', async () => {
      await store().keys.updateKeyState('acme', 'missing', 'revoked', undefined)
      await store().keys.deleteKey('acme', 'missing')
      expect(await store().keys.listKeys('acme')).toEqual([])
    })

    it('lists the keys of many tenants in one call, by tenant then oldest first', async () => {
      await store().keys.insertKeyIfAbsent(storedKey({ tenant: 'globex', kid: '2025-03-11' }))
      await store().keys.insertKeyIfAbsent(storedKey({ tenant: 'acme', kid: '2025-03-12' }))
      await store().keys.insertKeyIfAbsent(
        storedKey({ tenant: 'acme', kid: '2025-03-09', createdAt: t0 - day }),
      )
      await store().keys.insertKeyIfAbsent(storedKey({ tenant: 'initech', kid: '2025-03-10' }))
      const listed = await store().keys.listKeysOfTenants(['globex', 'acme', 'umbrella'])
      expect(listed.map((key) => [key.tenant, key.kid])).toEqual([
        ['acme', '2025-03-09'],
        ['acme', '2025-03-12'],
        ['globex', '2025-03-11'],
      ])
      expect(listed[1]).toStrictEqual(storedKey({ tenant: 'acme', kid: '2025-03-12' }))
      expect(await store().keys.listKeysOfTenants([])).toEqual([])
      // Names are data, never SQL: a quote or a comma is one more name.
      expect(await store().keys.listKeysOfTenants(["acme'", 'acme,globex'])).toEqual([])
    })

    it('lists the keys of thousands of tenants in one call', async () => {
      const names = Array.from({ length: 5000 }, (_, i) => `tenant-${i}`)
      for (const tenant of names.slice(0, 3)) {
        await store().keys.insertKeyIfAbsent(storedKey({ tenant }))
      }
      const listed = await store().keys.listKeysOfTenants(names)
      expect(listed.map((key) => key.tenant)).toEqual(['tenant-0', 'tenant-1', 'tenant-2'])
    })

    it('reports each tenant whose keys were written after a cursor, once', async () => {
      const since = await store().keys.keyChangeCursor()
      expect(await store().keys.keyChangesSince(since)).toEqual({ cursor: since, tenants: [] })

      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10' }))
      await store().keys.insertKeyIfAbsent(storedKey({ tenant: 'globex' }))
      const first = await store().keys.keyChangesSince(since)
      expect(first.tenants.sort()).toEqual(['acme', 'globex'])
      expect(first.cursor).toBeGreaterThan(since)
      expect(await store().keys.keyChangeCursor()).toBe(first.cursor)
      expect(await store().keys.keyChangesSince(first.cursor)).toEqual({
        cursor: first.cursor,
        tenants: [],
      })

      // Writes that change nothing are not changes.
      await store().keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
      await store().keys.retireKey('globex', 'missing', t0)
      await store().keys.updateKeyState('initech', 'missing', 'revoked', undefined)
      await store().keys.updatePrivateKey('acme', '2025-03-09', 'stale', 'x')
      await store().keys.deleteKey('acme', 'missing')
      expect((await store().keys.keyChangesSince(first.cursor)).tenants).toEqual([])

      // Each kind of write is one.
      const writes: [string, () => Promise<unknown>][] = [
        ['retireKey', () => store().keys.retireKey('acme', '2025-03-09', t0)],
        ['updateKeyState', () => store().keys.updateKeyState('acme', '2025-03-09', 'revoked', t0)],
        [
          'updatePrivateKey',
          () =>
            store().keys.updatePrivateKey(
              'globex',
              '2025-03-10',
              storedKey().privateKey,
              'enc:v1:x',
            ),
        ],
        ['deleteKey', () => store().keys.deleteKey('acme', '2025-03-09')],
      ]
      let cursor = first.cursor
      for (const [name, write] of writes) {
        await write()
        const changes = await store().keys.keyChangesSince(cursor)
        expect({ name, tenants: changes.tenants.length }).toEqual({ name, tenants: 1 })
        expect(changes.cursor).toBeGreaterThan(cursor)
        cursor = changes.cursor
      }
      // From an older cursor, a tenant written several times is reported once.
      expect((await store().keys.keyChangesSince(first.cursor)).tenants.sort()).toEqual([
        'acme',
        'globex',
      ])
    })

    it('throws a TypeError for a cursor that is not a non-negative integer', async () => {
      for (const cursor of [-1, 1.5, Number.NaN]) {
        await expect(store().keys.keyChangesSince(cursor)).rejects.toThrow(TypeError)
      }
    })

    it('hands out copies: changing a listed key changes nothing stored', async () => {
      const key = storedKey()
      await store().keys.insertKeyIfAbsent(key)
      key.state = 'revoked'
      const [listed] = await store().keys.listKeys('acme')
      if (listed) listed.state = 'retired'
      expect(await store().keys.listKeys('acme')).toMatchObject([{ state: 'active' }])
    })
  })
}
