import type { KeyState, KeyStore } from './ports.js'
import { readTenantKeys } from './internal/key-ops.js'
import { retiredSince } from './internal/lifecycle.js'
import { signsFrom } from './internal/publish-ahead.js'

/** A stored key as `tessera keys list` shows it: metadata only, never key material. */
export interface KeyInfo {
  tenant: string
  kid: string
  alg: 'RS256'
  /** The stored state, or `next` for an active key published ahead that does not sign yet. */
  state: KeyState | 'next'
  /** Epoch milliseconds. */
  createdAt: number
  /** Epoch milliseconds from which an active key signs (its creation unless published ahead). */
  signsFrom?: number
  /** Epoch milliseconds when it stopped signing; retired keys, and revoked ones that had. */
  retiredAt?: number
  /**
   * Retired keys: epoch milliseconds when they leave the JWKS (`retiredAt` + grace), after which
   * the next reload deletes them. Absent for active keys (published) and revoked ones (never).
   */
  publishedUntil?: number
}

/** Options of {@link readKeys}. */
export interface ReadKeysOptions {
  /** Tenant name. */
  tenant: string
  /** Where the key pairs live. */
  store: KeyStore
  /** JWKS_GRACE_HOURS in milliseconds. */
  graceMs: number
  /** Clock, epoch milliseconds, to tell `next` keys; Date.now by default. */
  now?: () => number
}

/**
 * Reads a tenant's keys, oldest first, as metadata: kid, state, times and when a retired key
 * stops being published. Reads nothing secret and changes nothing.
 *
 * @throws KeyError `ERR_KEY_INVALID` when a stored row is corrupted
 * @example
 * ```ts
 * for (const key of await readKeys({ tenant: 'acme', store: store.keys, graceMs })) {
 *   console.log(key.kid, key.state)
 * }
 * ```
 */
export async function readKeys(options: ReadKeysOptions): Promise<KeyInfo[]> {
  const { tenant, store, graceMs } = options
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw new TypeError('readKeys: options.graceMs must be a non-negative number of milliseconds')
  }
  const { keys } = await readTenantKeys(store, tenant)
  const now = (options.now ?? Date.now)()
  return keys.map((key) => {
    const pending = key.state === 'active' && signsFrom(key) > now
    const info: KeyInfo = {
      tenant: key.tenant,
      kid: key.kid,
      alg: key.alg,
      state: pending ? 'next' : key.state,
      createdAt: key.createdAt,
    }
    if (key.state === 'active') info.signsFrom = signsFrom(key)
    if (key.retiredAt !== undefined) info.retiredAt = key.retiredAt
    if (key.state === 'retired') info.publishedUntil = retiredSince(key) + graceMs
    return info
  })
}
