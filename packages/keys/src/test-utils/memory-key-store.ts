import type { KeyState, KeyStore, StoredKey } from '../ports.js'

/**
 * A KeyStore in a Map, for this package's tests only: keys must not depend on @tessera/store.
 * Each method awaits once before touching the map, so concurrent callers interleave the way
 * separate processes would.
 */
export class MemoryKeyStore implements KeyStore {
  readonly rows = new Map<string, StoredKey>()
  readonly pruned = new Map<string, Set<string>>()

  async listKeys(tenant: string): Promise<StoredKey[]> {
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
  }

  async retireKey(tenant: string, kid: string, retiredAt: number): Promise<boolean> {
    await Promise.resolve()
    const id = `${tenant}\u0000${kid}`
    const key = this.rows.get(id)
    if (key?.state !== 'active') return false
    this.rows.set(id, { ...key, state: 'retired', retiredAt })
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
    return true
  }

  async deleteKey(tenant: string, kid: string): Promise<void> {
    await Promise.resolve()
    if (!this.rows.delete(`${tenant}\u0000${kid}`)) return
    const kids = this.pruned.get(tenant) ?? new Set<string>()
    kids.add(kid)
    this.pruned.set(tenant, kids)
  }

  async listPrunedKids(tenant: string): Promise<string[]> {
    await Promise.resolve()
    return [...(this.pruned.get(tenant) ?? [])]
  }

  /** Test helper: the stored key, or undefined. */
  get(tenant: string, kid: string): StoredKey | undefined {
    return this.rows.get(`${tenant}\u0000${kid}`)
  }
}
