import type { FailureCount, ThrottleStore } from '@tessera/grants'
import type { KeyStore, StoredKey } from '@tessera/keys'
import { StoreError } from './errors.js'
import type { Store } from './store.js'
import { checkThrottleArgs } from './internal/checks.js'
import { settle } from './internal/settle.js'

function copy(key: StoredKey): StoredKey {
  return { ...key }
}

/**
 * A store in process memory: the same contract as the SQLite adapter, nothing persisted and
 * nothing shared between processes. For tests and `memory:` only.
 *
 * @example
 * ```ts
 * const store = createMemoryStore()
 * const ring = await loadKeyRing({ tenant: 'acme', algorithm: 'RS256', store: store.keys, ... })
 * ```
 */
export function createMemoryStore(): Store {
  const keys = new Map<string, Map<string, StoredKey>>()
  const windows = new Map<string, FailureCount>()
  let closed = false

  function open(): void {
    if (closed) throw new StoreError('ERR_STORE_CLOSED', 'the memory store is closed')
  }

  // Each method runs synchronously to completion before another can start: that makes
  // insert-if-absent and the counters atomic within the process.
  const keyStore: KeyStore = {
    listKeys(tenant) {
      return settle(() => {
        open()
        return [...(keys.get(tenant)?.values() ?? [])]
          .sort((a, b) => a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0))
          .map(copy)
      })
    },
    insertKeyIfAbsent(key) {
      return settle(() => {
        open()
        const tenantKeys = keys.get(key.tenant) ?? new Map<string, StoredKey>()
        if (tenantKeys.has(key.kid)) return false
        tenantKeys.set(key.kid, copy(key))
        keys.set(key.tenant, tenantKeys)
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
      })
    },
    deleteKey(tenant, kid) {
      return settle(() => {
        open()
        keys.get(tenant)?.delete(kid)
      })
    },
  }

  const throttle: ThrottleStore = {
    recordFailure(key, now, windowMs) {
      return settle(() => {
        open()
        checkThrottleArgs('recordFailure', now, windowMs)
        // Ended windows are dropped as failures come in, so that guessed usernames do not pile up.
        for (const [other, window] of windows) if (window.resetAt <= now) windows.delete(other)
        const current = windows.get(key)
        const next =
          current === undefined
            ? { count: 1, resetAt: now + windowMs }
            : { count: current.count + 1, resetAt: current.resetAt }
        windows.set(key, next)
        return { ...next }
      })
    },
    getFailures(key, now) {
      return settle(() => {
        open()
        checkThrottleArgs('getFailures', now)
        const current = windows.get(key)
        return current !== undefined && current.resetAt > now
          ? { ...current }
          : { count: 0, resetAt: now }
      })
    },
    clearFailures(key) {
      return settle(() => {
        open()
        windows.delete(key)
      })
    },
  }

  return {
    keys: keyStore,
    throttle,
    ping() {
      return settle(() => {
        open()
      })
    },
    close() {
      return settle(() => {
        closed = true
        keys.clear()
        windows.clear()
      })
    },
  }
}
