import type { KeyState, KeyStore, StoredKey } from '../ports.js'

/**
 * A KeyStore in a Map, for this package's tests only: keys must not depend on @tessera/store.
 * Each method awaits once before touching the map, so concurrent callers interleave the way
 * separate processes would.
 */
export class MemoryKeyStore implements KeyStore {
  readonly rows = new Map<string, StoredKey>()

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

  async deleteKey(tenant: string, kid: string): Promise<void> {
    await Promise.resolve()
    this.rows.delete(`${tenant}\u0000${kid}`)
  }

  /** Test helper: the stored key, or undefined. */
  get(tenant: string, kid: string): StoredKey | undefined {
    return this.rows.get(`${tenant}\u0000${kid}`)
  }
}
