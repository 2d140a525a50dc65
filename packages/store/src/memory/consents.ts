import type { ConsentRecord, ConsentStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import { Table } from './table.js'

function copyConsent(c: ConsentRecord): ConsentRecord {
  return {
    tenant: c.tenant,
    subject: c.subject,
    clientId: c.clientId,
    resources: c.resources,
    scopes: [...c.scopes],
    expiresAt: c.expiresAt,
  }
}

/** The id of a consent within its tenant: its subject, client and resources, unambiguously. */
function consentId(subject: string, clientId: string, resources: string): string {
  return JSON.stringify([subject, clientId, resources])
}

/** Remembered consents in a Map per tenant; `open` throws once the store is closed. */
export function createMemoryConsents(open: () => void): {
  store: ConsentStore
  /** Deletes the consents expired at `now`; returns how many. */
  sweep: (now: number) => number
  clear(): void
} {
  const consents = new Table<ConsentRecord>()
  const store: ConsentStore = {
    saveConsent(consent) {
      return settle(() => {
        open()
        const id = consentId(consent.subject, consent.clientId, consent.resources)
        consents.set(consent.tenant, id, copyConsent(consent))
      })
    },
    findConsent(tenant, subject, clientId, resources, now) {
      return settle(() => {
        open()
        const consent = consents.get(tenant, consentId(subject, clientId, resources))
        return consent === undefined || consent.expiresAt <= now ? undefined : copyConsent(consent)
      })
    },
    deleteConsents(tenant, clientId) {
      return settle(() => {
        open()
        consents.deleteWhere((consent, of) => of === tenant && consent.clientId === clientId)
      })
    },
  }
  return {
    store,
    sweep: (now) => consents.deleteWhere((consent) => consent.expiresAt <= now),
    clear: () => consents.clear(),
  }
}
