import type { TenantAlgorithmRecord } from '@tessera/keys'
import { describe, expect, it } from 'vitest'
import { freshStoreEach, hour, storedKey, t0, type OpenStore } from './fixtures.js'

/** Keys published ahead (`signsFrom`) and the tenants' algorithm history (TenantAlgorithmStore). */
export function publishAheadContract(open: OpenStore): void {
  describe('keys published ahead', () => {
    const store = freshStoreEach(open)
    it('round-trips signsFrom, and leaves it out of a key that signs from its creation', async () => {
      const now = storedKey({ kid: '2025-03-10' })
      const ahead = storedKey({ kid: '2025-03-10.2', createdAt: t0 + 1, signsFrom: t0 + 60_001 })
      await store().keys.insertKeyIfAbsent(now)
      await store().keys.insertKeyIfAbsent(ahead)
      expect(await store().keys.listKeys('acme')).toEqual([now, ahead])
      expect(await store().keys.listKeysOfTenants(['acme'])).toEqual([now, ahead])
      expect((await store().keys.listKeys('acme'))[0]).not.toHaveProperty('signsFrom')
      // A retirement keeps the time it was to sign from.
      expect(await store().keys.retireKey('acme', '2025-03-10.2', t0 + 2)).toBe(true)
      expect((await store().keys.listKeys('acme'))[1]).toMatchObject({
        state: 'retired',
        retiredAt: t0 + 2,
        signsFrom: t0 + 60_001,
      })
    })
  })

  describe('tenant algorithms', () => {
    const store = freshStoreEach(open)
    const hs256: TenantAlgorithmRecord = {
      tenant: 'acme',
      algorithm: 'HS256',
      since: t0,
      hs256Before: false,
    }
    const rs256: TenantAlgorithmRecord = {
      tenant: 'acme',
      algorithm: 'RS256',
      since: t0 + 60_000,
      hs256Before: true,
    }

    it('inserts a tenant’s record once and lists records by tenant', async () => {
      const algorithms = store().algorithms
      expect(await algorithms.listTenantAlgorithms(['acme'])).toEqual([])
      expect(await algorithms.insertTenantAlgorithmIfAbsent(hs256)).toBe(true)
      expect(await algorithms.insertTenantAlgorithmIfAbsent(rs256)).toBe(false)
      const globex = { ...rs256, tenant: 'globex', hs256Before: false }
      expect(await algorithms.insertTenantAlgorithmIfAbsent(globex)).toBe(true)
      const listed = await algorithms.listTenantAlgorithms(['acme', 'globex', 'initech'])
      expect(listed.sort((a, b) => a.tenant.localeCompare(b.tenant))).toEqual([hs256, globex])
      expect(await algorithms.listTenantAlgorithms([])).toEqual([])
    })

    it('replaces a record only while it still equals the expected one', async () => {
      const algorithms = store().algorithms
      expect(await algorithms.replaceTenantAlgorithm(hs256, rs256)).toBe(false)
      await algorithms.insertTenantAlgorithmIfAbsent(hs256)
      // Two replicas apply the same switch: one wins, the other sees it lost.
      expect(await algorithms.replaceTenantAlgorithm(hs256, rs256)).toBe(true)
      expect(await algorithms.replaceTenantAlgorithm(hs256, { ...rs256, since: t0 + 70_000 })).toBe(
        false,
      )
      expect(await algorithms.listTenantAlgorithms(['acme'])).toEqual([rs256])
      const back = { ...hs256, since: t0 + hour, hs256Before: true }
      expect(await algorithms.replaceTenantAlgorithm(rs256, back)).toBe(true)
      expect(await algorithms.listTenantAlgorithms(['acme'])).toEqual([back])
    })

    it('refuses a malformed record with a TypeError, changing nothing', async () => {
      const algorithms = store().algorithms
      const bad = { ...hs256, algorithm: 'none' } as unknown as TenantAlgorithmRecord
      await expect(algorithms.insertTenantAlgorithmIfAbsent(bad)).rejects.toThrow(TypeError)
      expect(await algorithms.listTenantAlgorithms(['acme'])).toEqual([])
    })
  })
}
