import type { KeyStore, StoredKey } from '@tessera/keys'
import { settle } from '../internal/settle.js'
import { copyKey } from './records.js'

function byCreation(a: StoredKey, b: StoredKey): number {
  return a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0)
}

/** The key store in Maps; `open` throws once the store is closed. */
export function createMemoryKeys(open: () => void): { store: KeyStore; clear(): void } {
  const keys = new Map<string, Map<string, StoredKey>>()
  const prunedKids = new Map<string, Set<string>>()
  /** The key change feed: the number of each tenant's last key write, and the last number. */
  const keyChanges = new Map<string, number>()
  let keySeq = 0
  const keyChanged = (tenant: string): void => {
    keyChanges.set(tenant, ++keySeq)
  }
  const store: KeyStore = {
    listKeys(tenant) {
      return settle(() => {
        open()
        return [...(keys.get(tenant)?.values() ?? [])].sort(byCreation).map(copyKey)
      })
    },
    insertKeyIfAbsent(key) {
      return settle(() => {
        open()
        const tenantKeys = keys.get(key.tenant) ?? new Map<string, StoredKey>()
        if (tenantKeys.has(key.kid)) return false
        tenantKeys.set(key.kid, copyKey(key))
        keys.set(key.tenant, tenantKeys)
        keyChanged(key.tenant)
        return true
      })
    },
    updateKeyState(tenant, kid, state, retiredAt) {
      return settle(() => {
        open()
        const key = keys.get(tenant)?.get(kid)
        if (key === undefined) return
        key.state = state
        if (retiredAt === undefined) delete key.retiredAt
        else key.retiredAt = retiredAt
        keyChanged(tenant)
      })
    },
    retireKey(tenant, kid, retiredAt) {
      return settle(() => {
        open()
        const key = keys.get(tenant)?.get(kid)
        if (key?.state !== 'active') return false
        key.state = 'retired'
        key.retiredAt = retiredAt
        keyChanged(tenant)
        return true
      })
    },
    updatePrivateKey(tenant, kid, current, next) {
      return settle(() => {
        open()
        const key = keys.get(tenant)?.get(kid)
        if (key?.privateKey !== current) return false
        key.privateKey = next
        keyChanged(tenant)
        return true
      })
    },
    deleteKey(tenant, kid) {
      return settle(() => {
        open()
        if (keys.get(tenant)?.delete(kid) !== true) return
        keyChanged(tenant)
        const pruned = prunedKids.get(tenant) ?? new Set<string>()
        pruned.add(kid)
        prunedKids.set(tenant, pruned)
      })
    },
    listPrunedKids(tenant) {
      return settle(() => {
        open()
        return [...(prunedKids.get(tenant) ?? [])].sort()
      })
    },
    listKeysOfTenants(tenants) {
      return settle(() => {
        open()
        return [...new Set(tenants)]
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
          .flatMap((tenant) => [...(keys.get(tenant)?.values() ?? [])].sort(byCreation))
          .map(copyKey)
      })
    },
    keyChangeCursor() {
      return settle(() => {
        open()
        return keySeq
      })
    },
    keyChangesSince(cursor) {
      return settle(() => {
        open()
        const tenants = [...keyChanges].filter(([, seq]) => seq > cursor).map(([name]) => name)
        return { cursor: Math.max(cursor, keySeq), tenants }
      })
    },
  }
  return {
    store,
    clear() {
      keys.clear()
      prunedKids.clear()
    },
  }
}
