/**
 * The key-store port: persistence for RS256 key pairs. Adapters live in @tessera/store.
 *
 * @module
 */

/** Lifecycle state of a stored key (DESIGN §6). */
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
  /** Private JWK as JSON text; may later be an encrypted envelope (KEY_ENCRYPTION_SECRET). */
  privateKey: string
  /** Epoch milliseconds. */
  createdAt: number
  state: KeyState
  /** Epoch milliseconds when the key stopped signing; set for retired keys. */
  retiredAt?: number
}

/** Persistence for RS256 keys. Implementations must be safe across processes. */
export interface KeyStore {
  /** Every key of a tenant, any state, oldest first. */
  listKeys(tenant: string): Promise<StoredKey[]>
  /**
   * Inserts the key unless (tenant, kid) exists already. Returns true when this call inserted it.
   * Replicas race here on start; the loser reads the winner's key back.
   */
  insertKeyIfAbsent(key: StoredKey): Promise<boolean>
  /** Changes the state of one key; a no-op when it does not exist. */
  updateKeyState(
    tenant: string,
    kid: string,
    state: KeyState,
    retiredAt: number | undefined,
  ): Promise<void>
  /** Deletes one key, public and private parts. */
  deleteKey(tenant: string, kid: string): Promise<void>
}
