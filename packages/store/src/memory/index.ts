import { StoreError } from '../errors.js'
import { checkedStore } from '../internal/checked-store.js'
import { settle } from '../internal/settle.js'
import type { Store } from '../store.js'
import { createMemoryFailureCounter } from './client-auth-failures.js'
import { createMemoryCodes } from './codes.js'
import { createMemoryConsents } from './consents.js'
import { createMemoryExpiry } from './expiry.js'
import { createMemoryKeys } from './keys.js'
import { createMemoryMarks } from './marks.js'
import { createMemoryParsedConfig } from './parsed-config.js'
import { createMemoryRefreshTokens } from './refresh-tokens.js'
import { createMemoryRegistrations } from './registrations.js'
import { createMemorySecrets } from './secrets.js'
import { createMemorySessions } from './sessions.js'
import { createGrantTables } from './table.js'
import { createMemoryTenantAlgorithms } from './tenant-algorithms.js'
import { createMemoryThrottle } from './throttle.js'

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
  return checkedStore(createMemoryAdapter())
}

/**
 * The ports over one set of Maps. Each method runs synchronously to completion before another
 * can start: that makes insert-if-absent, the counters, redemption, rotation and takes atomic
 * within the process. Whatever can throw runs before the first write, so a failed call changes
 * nothing.
 */
function createMemoryAdapter(): Store {
  let closed = false
  function open(): void {
    if (closed) throw new StoreError('ERR_STORE_CLOSED', 'the memory store is closed')
  }
  const grants = createGrantTables()
  const keys = createMemoryKeys(open)
  const algorithms = createMemoryTenantAlgorithms(open)
  const throttle = createMemoryThrottle(open)
  const clientAuthFailures = createMemoryFailureCounter(open)
  const codes = createMemoryCodes(open, grants)
  const refreshTokens = createMemoryRefreshTokens(open, grants)
  const sessions = createMemorySessions(open, grants)
  const marks = createMemoryMarks(open)
  const secrets = createMemorySecrets(open)
  const parsedConfig = createMemoryParsedConfig(open)
  const registrations = createMemoryRegistrations(open)
  const consents = createMemoryConsents(open)
  return {
    keys: keys.store,
    algorithms: algorithms.store,
    throttle: throttle.store,
    clientAuthFailures,
    codes: codes.store,
    refreshTokens: refreshTokens.store,
    marks: marks.store,
    secrets: secrets.store,
    sessions: sessions.store,
    clientRegistrations: registrations.store,
    consents: consents.store,
    expiry: createMemoryExpiry(open, [
      codes.sweep,
      refreshTokens.sweep,
      marks.sweep,
      sessions.sweep,
      throttle.sweep,
      (now) => clientAuthFailures.sweep(now),
      consents.sweep,
    ]),
    parsedConfig: parsedConfig.store,
    ping() {
      return settle(() => {
        open()
      })
    },
    close() {
      return settle(() => {
        closed = true
        for (const part of [
          grants,
          keys,
          algorithms,
          throttle,
          marks,
          secrets,
          parsedConfig,
          registrations,
          consents,
        ]) {
          part.clear()
        }
      })
    },
  }
}
