import type { KeyStore, StoredKey } from '../ports.js'
import type { KeyCipher } from './key-cipher.js'
import { isSealed } from './key-cipher.js'
import { readTenantKeys } from './key-ops.js'
import type { TenantKeys } from './key-ops.js'
import { isPastGrace } from './lifecycle.js'
import { parseStoredKeys } from './stored-key.js'

/**
 * The tenant's keys for a refresh: `given` (the caller's read) or the store's. Pruned kids
 * matter only to name a new key: they are read only `forMaking` one.
 */
export async function readRefreshKeys(
  store: KeyStore,
  tenant: string,
  given: readonly StoredKey[] | undefined,
  forMaking: boolean,
): Promise<TenantKeys> {
  if (forMaking) return readTenantKeys(store, tenant)
  return { keys: parseStoredKeys(given ?? (await store.listKeys(tenant)), tenant), prunedKids: [] }
}

/** Encrypts the keys stored before KEY_ENCRYPTION_SECRET was set. */
export async function encryptPlaintext(
  store: KeyStore,
  cipher: KeyCipher,
  current: TenantKeys,
): Promise<void> {
  for (const key of current.keys) {
    if (isSealed(key.privateKey)) continue
    const sealed = cipher.seal(key.privateKey, key.tenant, key.kid)
    // Conditional: a replica that encrypted it first keeps its envelope.
    await store.updatePrivateKey(key.tenant, key.kid, key.privateKey, sealed)
  }
}

/**
 * Retires the `superseded` keys among `keys` at `now`, and answers the tenant's keys after it.
 * A lost retirement means the key stopped being active since the read: another replica retired
 * it (keep publishing it, with that replica's time) or someone revoked it (never publish it).
 * Only the store knows which.
 */
export async function retireKeys(
  store: KeyStore,
  tenant: string,
  keys: readonly StoredKey[],
  superseded: ReadonlySet<StoredKey>,
  now: number,
): Promise<StoredKey[]> {
  const retire = keys.filter((key) => superseded.has(key))
  const lost: string[] = []
  for (const key of retire) {
    if (!(await store.retireKey(tenant, key.kid, now))) lost.push(key.kid)
  }
  const fresh = lost.length === 0 ? [] : (await readTenantKeys(store, tenant)).keys
  return keys.flatMap((key): StoredKey[] => {
    if (!retire.includes(key)) return [key]
    if (!lost.includes(key.kid)) return [{ ...key, state: 'retired', retiredAt: now }]
    const stored = fresh.find((candidate) => candidate.kid === key.kid)
    return stored === undefined || stored.state === 'active' ? [] : [stored]
  })
}

/** Deletes the retired keys whose grace has run out, and answers the others. */
export async function pruneKeys(
  store: KeyStore,
  tenant: string,
  keys: readonly StoredKey[],
  now: number,
  graceMs: number,
): Promise<StoredKey[]> {
  const prune = keys.filter((key) => isPastGrace(key, now, graceMs))
  for (const key of prune) await store.deleteKey(tenant, key.kid)
  return keys.filter((key) => !prune.includes(key))
}
