import type {
  AuthorizationCodeRecord,
  RefreshFamily,
  RefreshTokenRecord,
  SessionRecord,
} from '@tessera/grants'

/** Rows keyed by (tenant, id), as in a table whose primary key is that pair. */
export class Table<T> {
  readonly #tenants = new Map<string, Map<string, T>>()

  get(tenant: string, id: string): T | undefined {
    return this.#tenants.get(tenant)?.get(id)
  }

  has(tenant: string, id: string): boolean {
    return this.#tenants.get(tenant)?.has(id) ?? false
  }

  set(tenant: string, id: string, row: T): void {
    const rows = this.#tenants.get(tenant) ?? new Map<string, T>()
    rows.set(id, row)
    this.#tenants.set(tenant, rows)
  }

  delete(tenant: string, id: string): boolean {
    return this.#tenants.get(tenant)?.delete(id) ?? false
  }

  /** How many rows the tenant has. */
  count(tenant: string): number {
    return this.#tenants.get(tenant)?.size ?? 0
  }

  rows(tenant: string): IterableIterator<T> {
    return (this.#tenants.get(tenant) ?? new Map<string, T>()).values()
  }

  /** Deletes the rows `drop` selects and returns how many. */
  deleteWhere(drop: (row: T, tenant: string) => boolean): number {
    let deleted = 0
    for (const [tenant, rows] of this.#tenants) {
      for (const [id, row] of rows) {
        if (drop(row, tenant)) {
          rows.delete(id)
          deleted++
        }
      }
    }
    return deleted
  }

  clear(): void {
    this.#tenants.clear()
  }
}

/**
 * The rows of the grants. Codes, refresh tokens and sessions share them: a redemption creates a
 * family, and a logout consumes the codes and revokes the families of its sid.
 */
export interface GrantTables {
  readonly codes: Table<AuthorizationCodeRecord>
  readonly families: Table<RefreshFamily>
  readonly tokens: Table<RefreshTokenRecord>
  readonly sessions: Table<SessionRecord>
}

export function createGrantTables(): GrantTables & { clear(): void } {
  const tables = {
    codes: new Table<AuthorizationCodeRecord>(),
    families: new Table<RefreshFamily>(),
    tokens: new Table<RefreshTokenRecord>(),
    sessions: new Table<SessionRecord>(),
  }
  return {
    ...tables,
    clear() {
      for (const table of Object.values(tables)) table.clear()
    },
  }
}
