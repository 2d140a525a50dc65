import type { KeyChanges, KeyState, KeyStore, StoredKey } from '../ports.js'

/**
 * A KeyStore in a Map, for this package's tests only: keys must not depend on @tessera/store.
 * Each method awaits once before touching the map, so concurrent callers interleave the way
 * separate processes would.
 */
export class MemoryKeyStore implements KeyStore {
  readonly rows = new Map<string, StoredKey>()
  readonly pruned = new Map<string, Set<string>>()
  /** The change feed: the sequence number of each tenant's last write. */
  readonly changes = new Map<string, number>()
  sequence = 0
  /** Calls per method, for tests that count queries. */
  readonly calls = new Map<string, number>()

  #count(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1)
  }

  #changed(tenant: string): void {
    this.changes.set(tenant, ++this.sequence)
  }

  async listKeys(tenant: string): Promise<StoredKey[]> {
    this.#count('listKeys')
    await Promise.resolve()
    return [...this.rows.values()]
      .filter((key) => key.tenant === tenant)
      .sort((a, b) => a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0))
      .map((key) => ({ ...key }))
  }

  async insertKeyIfAbsent(key: StoredKey): Promise<boolean> {
    await Promise.resolve()
    const id = `${key.tenant}\u0000${key.kid}`
    if (this.rows.has(id)) return false
    this.rows.set(id, { ...key })
    this.#changed(key.tenant)
    return true
  }

  async updateKeyState(
    tenant: string,
    kid: string,
    state: KeyState,
    retiredAt: number | undefined,
  ): Promise<void> {
    await Promise.resolve()
    const id = `${tenant}\u0000${kid}`
    const key = this.rows.get(id)
    if (key === undefined) return
    const next: StoredKey = { ...key, state }
    if (retiredAt === undefined) delete next.retiredAt
    else next.retiredAt = retiredAt
    this.rows.set(id, next)
    this.#changed(tenant)
  }

  async retireKey(tenant: string, kid: string, retiredAt: number): Promise<boolean> {
    await Promise.resolve()
    const id = `${tenant}\u0000${kid}`
    const key = this.rows.get(id)
    if (key?.state !== 'active') return false
    this.rows.set(id, { ...key, state: 'retired', retiredAt })
    this.#changed(tenant)
    return true
  }

  async updatePrivateKey(
    tenant: string,
    kid: string,
    current: string,
    next: string,
  ): Promise<boolean> {
    await Promise.resolve()
    const id = `${tenant}\u0000${kid}`
    const key = this.rows.get(id)
    if (key?.privateKey !== current) return false
    this.rows.set(id, { ...key, privateKey: next })
    this.#changed(tenant)
    return true
  }

  async deleteKey(tenant: string, kid: string): Promise<void> {
    await Promise.resolve()
    if (!this.rows.delete(`${tenant}\u0000${kid}`)) return
    this.#changed(tenant)
    const kids = this.pruned.get(tenant) ?? new Set<string>()
    kids.add(kid)
    this.pruned.set(tenant, kids)
  }

  async listPrunedKids(tenant: string): Promise<string[]> {
    this.#count('listPrunedKids')
    await Promise.resolve()
    return [...(this.pruned.get(tenant) ?? [])]
  }

  async listKeysOfTenants(tenants: readonly string[]): Promise<StoredKey[]> {
    this.#count('listKeysOfTenants')
    const wanted = new Set(tenants)
    await Promise.resolve()
    return [...this.rows.values()]
      .filter((key) => wanted.has(key.tenant))
      .sort(
        (a, b) =>
          (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0) ||
          a.createdAt - b.createdAt ||
          (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0),
      )
      .map((key) => ({ ...key }))
  }

  async keyChangeCursor(): Promise<number> {
    this.#count('keyChangeCursor')
    await Promise.resolve()
    return this.sequence
  }

  async keyChangesSince(cursor: number): Promise<KeyChanges> {
    this.#count('keyChangesSince')
    await Promise.resolve()
    const tenants = [...this.changes].filter(([, seq]) => seq > cursor).map(([tenant]) => tenant)
    return { cursor: Math.max(cursor, this.sequence), tenants }
  }

  /** Test helper: the stored key, or undefined. */
  get(tenant: string, kid: string): StoredKey | undefined {
    return this.rows.get(`${tenant}\u0000${kid}`)
  }
}
