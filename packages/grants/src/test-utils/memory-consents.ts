import type { ConsentRecord, ConsentStore } from '../dynamic-ports.js'

/**
 * A consent store for the unit tests of grants, keeping every saved record in `records` so a
 * test can see what was remembered; the store's adapters have their own contract suite.
 */
export function memoryConsents(): ConsentStore & { records: Map<string, ConsentRecord> } {
  const records = new Map<string, ConsentRecord>()
  const key = (tenant: string, subject: string, clientId: string, resources: string): string =>
    JSON.stringify([tenant, subject, clientId, resources])
  return {
    records,
    saveConsent(consent) {
      const { tenant, subject, clientId, resources } = consent
      records.set(key(tenant, subject, clientId, resources), {
        ...consent,
        scopes: [...consent.scopes],
      })
      return Promise.resolve()
    },
    findConsent(tenant, subject, clientId, resources, now) {
      const found = records.get(key(tenant, subject, clientId, resources))
      return Promise.resolve(
        found === undefined || found.expiresAt <= now
          ? undefined
          : { ...found, scopes: [...found.scopes] },
      )
    },
    deleteConsents(tenant, clientId) {
      for (const [k, record] of records) {
        if (record.tenant === tenant && record.clientId === clientId) records.delete(k)
      }
      return Promise.resolve()
    },
  }
}
