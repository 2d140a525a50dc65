import { KeyError } from '../errors.js'
import { generateRsaKey } from '../generate.js'
import type { KeyStore, StoredKey } from '../ports.js'
import type { KeyCipher } from './key-cipher.js'
import { nextKid } from './kid.js'
import { parsePrivateJwk, parseStoredKeys } from './stored-key.js'

// Each attempt follows a lost insert race; losing five in a row means something else is wrong.
const MAX_CREATE_ATTEMPTS = 5

/** What the store holds for one tenant: its keys, and the kids of keys already pruned. */
export interface TenantKeys {
  keys: StoredKey[]
  prunedKids: string[]
}

/** Reads and re-parses a tenant's keys; the store is a trust boundary. */
export async function readTenantKeys(store: KeyStore, tenant: string): Promise<TenantKeys> {
  const [rows, pruned] = await Promise.all([store.listKeys(tenant), store.listPrunedKids(tenant)])
  const keys = parseStoredKeys(rows, tenant)
  if (!Array.isArray(pruned) || pruned.some((kid) => typeof kid !== 'string')) {
    throw new KeyError('ERR_KEY_INVALID', `the key store returned bad pruned kids for "${tenant}"`)
  }
  return { keys, prunedKids: pruned }
}

/**
 * Opens every stored private key and parses it, so that a missing or wrong secret
 * (`ERR_KEY_DECRYPT`) or a corrupted key (`ERR_KEY_INVALID`) is found before anything is written,
 * and a key ring may put off making a key's signer until it first signs.
 */
export function checkPrivateKeysOpen(keys: readonly StoredKey[], cipher: KeyCipher): void {
  for (const key of keys) {
    parsePrivateJwk({ ...key, privateKey: cipher.open(key.privateKey, key.tenant, key.kid) })
  }
}

/**
 * Makes a key pair for a kid: the key's private JWK text holds no kid, so a pair made before its
 * kid was known (outside the ring's lock) is renamed with `{ ...key, kid }` before it is sealed.
 */
export type GenerateKey = (tenant: string, kid: string, now: number) => Promise<StoredKey>

/**
 * Makes a new active key: the next free kid of today's date (past every stored and pruned kid),
 * inserted if absent. When another process inserted that kid first, its key is used instead, so
 * that every replica signs with and publishes the same one.
 *
 * @param generate - makes each candidate, {@link generateRsaKey} by default; a key ring passes
 * one that hands out a pair it already made first, then queues for further ones
 * @param aheadMs - how long after its creation the key starts signing (stored as `signsFrom`);
 * 0 signs at once
 * @returns the active key as stored (private part sealed) and the tenant's keys including it
 */
export async function createActiveKey(
  store: KeyStore,
  tenant: string,
  cipher: KeyCipher,
  current: TenantKeys,
  now: number,
  generate: GenerateKey = generateRsaKey,
  aheadMs = 0,
): Promise<{ active: StoredKey; keys: StoredKey[] }> {
  let seen = current
  for (let attempt = 1; attempt <= MAX_CREATE_ATTEMPTS; attempt++) {
    const kid = nextKid([...seen.keys.map((key) => key.kid), ...seen.prunedKids], now)
    const generated: StoredKey = {
      ...(await generate(tenant, kid, now)),
      tenant,
      kid,
      createdAt: now,
    }
    delete generated.signsFrom
    if (aheadMs > 0) generated.signsFrom = now + aheadMs
    const candidate = { ...generated, privateKey: cipher.seal(generated.privateKey, tenant, kid) }
    if (await store.insertKeyIfAbsent(candidate)) {
      return { active: candidate, keys: [...seen.keys, candidate] }
    }
    seen = await readTenantKeys(store, tenant)
    const winner = seen.keys.find((key) => key.kid === kid)
    if (winner?.state === 'active') return { active: winner, keys: seen.keys }
  }
  throw new KeyError(
    'ERR_KEY_CONFLICT',
    `could not create a key for tenant "${tenant}": ${MAX_CREATE_ATTEMPTS} inserts lost to other writers`,
  )
}
