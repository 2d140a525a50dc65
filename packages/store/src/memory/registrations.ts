import type { ClientRegistrationStore, RegisteredClientRecord } from '@tessera/grants'
import { conflictError } from '../internal/checks.js'
import { settle } from '../internal/settle.js'
import { Table } from './table.js'

/** A copy, as a row read back would be: the metadata through JSON, an absent secret left out. */
function copyRegistration(r: RegisteredClientRecord): RegisteredClientRecord {
  const record: RegisteredClientRecord = {
    tenant: r.tenant,
    clientId: r.clientId,
    registrationTokenHash: r.registrationTokenHash,
    metadata: JSON.parse(JSON.stringify(r.metadata)) as Record<string, unknown>,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }
  if (r.secretHash !== undefined) record.secretHash = r.secretHash
  return record
}

/**
 * Registered clients in a Map per tenant. Counting and inserting run in one synchronous step,
 * so concurrent registrations never pass the bound. `open` throws once the store is closed.
 */
export function createMemoryRegistrations(open: () => void): {
  store: ClientRegistrationStore
  clear(): void
} {
  const clients = new Table<RegisteredClientRecord>()
  const store: ClientRegistrationStore = {
    registerClient(record, max) {
      return settle(() => {
        open()
        // Full before taken, as the SQL adapters decide.
        if (clients.count(record.tenant) >= max) return false
        if (clients.has(record.tenant, record.clientId))
          throw conflictError('the registered client')
        clients.set(record.tenant, record.clientId, copyRegistration(record))
        return true
      })
    },
    findRegisteredClient(tenant, clientId) {
      return settle(() => {
        open()
        const record = clients.get(tenant, clientId)
        return record === undefined ? undefined : copyRegistration(record)
      })
    },
    updateRegisteredClient(record) {
      return settle(() => {
        open()
        const stored = clients.get(record.tenant, record.clientId)
        if (stored === undefined) return false
        const { createdAt, registrationTokenHash } = stored
        clients.set(
          record.tenant,
          record.clientId,
          copyRegistration({ ...record, createdAt, registrationTokenHash }),
        )
        return true
      })
    },
    deleteRegisteredClient(tenant, clientId) {
      return settle(() => {
        open()
        return clients.delete(tenant, clientId)
      })
    },
  }
  return { store, clear: () => clients.clear() }
}
