import { describe, expect, it } from 'vitest'
import type { Store } from '../../store.js'
import { consentRecord, day, registeredClient, t0 } from './fixtures.js'
import type { SharedDatabase } from './shared-database.js'

/**
 * Registrations and consents across several stores of one process on one database: the bound
 * holds between them, and what one writes the others see.
 */
export function dynamicReplicasContract(database: SharedDatabase): void {
  describe('stores on one database: registrations and consents', () => {
    async function replicas(): Promise<{ stores: Store[]; url: string }> {
      const url = await database.fresh()
      const stores = await Promise.all(Array.from({ length: 4 }, () => database.open(url)))
      return { stores, url }
    }

    function nth(stores: Store[], i: number): Store {
      const store = stores[i % stores.length]
      if (store === undefined) throw new Error('no replicas')
      return store
    }

    it('accept exactly max of 60 concurrent registrations per tenant between them', async () => {
      const { stores, url } = await replicas()
      const max = 9
      // Two tenants at once: each has its own bound, and neither holds the other back.
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          nth(stores, i).clientRegistrations.registerClient(
            registeredClient({ tenant: i % 2 === 0 ? 'acme' : 'globex', clientId: `client-${i}` }),
            max,
          ),
        ),
      )
      expect(answers.filter((ok, i) => ok && i % 2 === 0)).toHaveLength(max)
      expect(answers.filter((ok, i) => ok && i % 2 === 1)).toHaveLength(max)
      expect(await database.count(url, "registered_clients WHERE tenant = 'acme'")).toBe(max)
      expect(await database.count(url, "registered_clients WHERE tenant = 'globex'")).toBe(max)
      // Each answer says what was stored, as every replica sees it.
      for (let i = 0; i < 60; i++) {
        const tenant = i % 2 === 0 ? 'acme' : 'globex'
        const found = await nth(stores, i + 1).clientRegistrations.findRegisteredClient(
          tenant,
          `client-${i}`,
        )
        expect(found !== undefined).toBe(answers[i])
      }
    })

    it('see each other’s registrations, updates and deletions', async () => {
      const { stores } = await replicas()
      const [a, b, c] = [nth(stores, 0), nth(stores, 1), nth(stores, 2)]
      const client = registeredClient()
      expect(await a.clientRegistrations.registerClient(client, 10)).toBe(true)
      expect(
        await b.clientRegistrations.findRegisteredClient('acme', client.clientId),
      ).toStrictEqual(client)
      const updated = { ...client, metadata: { client_name: 'Notes 2' }, updatedAt: t0 + 1 }
      expect(await b.clientRegistrations.updateRegisteredClient(updated)).toBe(true)
      expect(
        await c.clientRegistrations.findRegisteredClient('acme', client.clientId),
      ).toStrictEqual(updated)
      expect(await c.clientRegistrations.deleteRegisteredClient('acme', client.clientId)).toBe(true)
      expect(
        await a.clientRegistrations.findRegisteredClient('acme', client.clientId),
      ).toBeUndefined()
      expect(await b.clientRegistrations.deleteRegisteredClient('acme', client.clientId)).toBe(
        false,
      )
    })

    it('find a consent another saved, replaced, deleted or purged', async () => {
      const { stores } = await replicas()
      const [a, b, c, d] = [nth(stores, 0), nth(stores, 1), nth(stores, 2), nth(stores, 3)]
      const consent = consentRecord()
      const find = (store: Store, now = t0) =>
        store.consents.findConsent('acme', 'alice', consent.clientId, consent.resources, now)
      await a.consents.saveConsent(consent)
      expect(
        await b.consents.findConsent('acme', 'alice', consent.clientId, consent.resources, t0),
      ).toStrictEqual(consent)
      const replaced = consentRecord({ scopes: ['tools:read'], expiresAt: t0 + day })
      await c.consents.saveConsent(replaced)
      expect(await find(d)).toStrictEqual(replaced)
      await d.consents.deleteConsents('acme', consent.clientId)
      expect(await find(a)).toBeUndefined()
      await a.consents.saveConsent(replaced)
      expect(await b.expiry.purgeExpired(t0 + day)).toBe(1)
      expect(await find(c, t0)).toBeUndefined()
    })
  })
}
