import type { ClientRegistrationStore, RegisteredClientRecord } from '../dynamic-ports.js'

/**
 * A ClientRegistrationStore in a Map, for the grants' unit tests (the real adapters and their
 * contract suite are in @tessera/store). Each call runs to completion synchronously, so the
 * bound of `registerClient` holds under concurrency.
 */
export function memoryRegistrations(): ClientRegistrationStore & {
  records: Map<string, RegisteredClientRecord>
} {
  const records = new Map<string, RegisteredClientRecord>()
  const key = (tenant: string, clientId: string): string => `${tenant}\n${clientId}`
  return {
    records,
    registerClient(record, max) {
      const held = [...records.values()].filter((r) => r.tenant === record.tenant).length
      if (held >= max) return Promise.resolve(false)
      records.set(key(record.tenant, record.clientId), structuredClone(record))
      return Promise.resolve(true)
    },
    findRegisteredClient(tenant, clientId) {
      const found = records.get(key(tenant, clientId))
      return Promise.resolve(found === undefined ? undefined : structuredClone(found))
    },
    updateRegisteredClient(record) {
      const found = records.get(key(record.tenant, record.clientId))
      if (found === undefined) return Promise.resolve(false)
      const { secretHash, metadata, updatedAt } = record
      const next: RegisteredClientRecord = {
        ...found,
        metadata: structuredClone(metadata),
        updatedAt,
      }
      if (secretHash === undefined) delete next.secretHash
      else next.secretHash = secretHash
      records.set(key(record.tenant, record.clientId), next)
      return Promise.resolve(true)
    },
    deleteRegisteredClient(tenant, clientId) {
      return Promise.resolve(records.delete(key(tenant, clientId)))
    },
  }
}
