/**
 * The key-store port: persistence for RS256 key pairs. Adapters live in @tessera/store.
 *
 * @module
 */

/** Lifecycle state of a stored key. */
export type KeyState = 'active' | 'retired' | 'revoked'

/** One RS256 key pair as persisted. */
export interface StoredKey {
  /** Tenant name. */
  tenant: string
  /** `YYYY-MM-DD`, or `YYYY-MM-DD.N` for a same-day manual rotation. */
  kid: string
  alg: 'RS256'
  /** Public JWK as JSON text (`kty, n, e`). */
  publicJwk: string
  /**
   * Private JWK as JSON text, or an `enc:v1:` AES-256-GCM envelope of that text when
   * KEY_ENCRYPTION_SECRET is set. Adapters store it as opaque text.
   */
  privateKey: string
  /** Epoch milliseconds. */
  createdAt: number
  state: KeyState
  /** Epoch milliseconds when the key stopped signing; set for retired keys. */
  retiredAt?: number
  /**
   * Epoch milliseconds from which the key signs (KEY_PUBLISH_AHEAD_SECONDS after its creation
   * when another key was signing): until then it is published but the previous key signs.
   * Absent: it signs from `createdAt`.
   */
  signsFrom?: number
}

/** What {@link KeyStore.keyChangesSince} answers. */
export interface KeyChanges {
  /** Where to ask from next time. */
  cursor: number
  /** Each tenant whose keys changed after the cursor asked with, once, in no particular order. */
  tenants: string[]
}

/**
 * Persistence for RS256 keys. Implementations must be safe across processes: replicas and the
 * `tessera keys` commands write to the same store while issuers run.
 */
export interface KeyStore {
  /** Every key of a tenant, any state, oldest first. */
  listKeys(tenant: string): Promise<StoredKey[]>
  /**
   * Every key of each of `tenants`, any state, by tenant and then oldest first, in one query: a
   * start loads thousands of tenants' keys with it instead of a query per tenant.
   */
  listKeysOfTenants(tenants: readonly string[]): Promise<StoredKey[]>
  /**
   * Inserts the key unless (tenant, kid) exists already. Returns true when this call inserted it.
   * Replicas race here on start; the loser reads the winner's key back.
   */
  insertKeyIfAbsent(key: StoredKey): Promise<boolean>
  /** Changes the state of one key; a no-op when it does not exist. Used for revocation. */
  updateKeyState(
    tenant: string,
    kid: string,
    state: KeyState,
    retiredAt: number | undefined,
  ): Promise<void>
  /**
   * Marks one key retired at `retiredAt` if, and only if, it is still active; returns whether it
   * changed. Conditional so that a retirement worked out from an earlier read can never undo a
   * revocation made in between by another process.
   */
  retireKey(tenant: string, kid: string, retiredAt: number): Promise<boolean>
  /**
   * Replaces the private-key text of one key if it still equals `current`; returns whether it
   * changed. Used to encrypt keys stored before KEY_ENCRYPTION_SECRET was set; conditional so
   * that two processes never overwrite each other's envelope.
   */
  updatePrivateKey(tenant: string, kid: string, current: string, next: string): Promise<boolean>
  /**
   * Deletes one key, public and private parts, and remembers its kid (see
   * {@link KeyStore.listPrunedKids}). A no-op when it does not exist.
   */
  deleteKey(tenant: string, kid: string): Promise<void>
  /**
   * The kids of the tenant's deleted keys. New kids are chosen past these as well as past the
   * stored ones, so a kid never names two different keys, even after the first was pruned
   * (verifiers cache keys by kid).
   */
  listPrunedKids(tenant: string): Promise<string[]>
  /**
   * The position of the change feed now: every later write to a key (insert, state, private
   * key, delete) is reported by {@link KeyStore.keyChangesSince} of it.
   */
  keyChangeCursor(): Promise<number>
  /**
   * The tenants whose keys were written after `cursor`, by any process, in one query: a running
   * issuer polls it and reloads only those tenants' rings. Cursors only grow, and a change is
   * never reported at a cursor that a reader could have passed before the change was visible.
   */
  keyChangesSince(cursor: number): Promise<KeyChanges>
}

/** A tenant's access-token signing algorithm as the store records it. */
export interface TenantAlgorithmRecord {
  /** Tenant name. */
  tenant: string
  /** The algorithm of the tenant's current period. */
  algorithm: 'HS256' | 'RS256'
  /**
   * Epoch milliseconds when the period began: for RS256, the moment RS256 started (or starts)
   * signing access tokens; for HS256, when the record saw the tenant HS256.
   */
  since: number
  /** Whether the tenant signed access tokens with HS256 at some time before this period. */
  hs256Before: boolean
}

/**
 * Persistence for each tenant's signing-algorithm history, shared by every replica: it decides
 * whether an RS256 tenant may still accept an HS256 token. Writes are insert-if-absent and
 * compare-and-set, so replicas applying the same change converge on one record.
 */
export interface TenantAlgorithmStore {
  /** The records of each of `tenants` that has one, in no particular order, in one query. */
  listTenantAlgorithms(tenants: readonly string[]): Promise<TenantAlgorithmRecord[]>
  /** Inserts the record unless the tenant has one; returns true when this call inserted it. */
  insertTenantAlgorithmIfAbsent(record: TenantAlgorithmRecord): Promise<boolean>
  /**
   * Replaces the tenant's record with `next` if, and only if, it still equals `expected`
   * (algorithm, since and hs256Before); returns whether it changed.
   */
  replaceTenantAlgorithm(
    expected: TenantAlgorithmRecord,
    next: TenantAlgorithmRecord,
  ): Promise<boolean>
}
