import type Database from 'better-sqlite3'

/** One step of the SQLite schema. Applied once, in its own transaction, in version order. */
export interface Migration {
  /** Consecutive from 1; never renumber or edit a released migration, append a new one. */
  readonly version: number
  /** Short description, recorded in `schema_migrations`. */
  readonly name: string
  /** One or more statements. */
  readonly sql: string
}

/**
 * The schema, oldest first. STRICT tables make SQLite refuse a value of the wrong type instead of
 * storing it silently. Later issues append auth codes, login transactions and refresh-token
 * families here.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'keys',
    sql: `
      CREATE TABLE keys (
        tenant TEXT NOT NULL,
        kid TEXT NOT NULL,
        alg TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        private_key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('active', 'retired', 'revoked')),
        retired_at INTEGER,
        PRIMARY KEY (tenant, kid)
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'throttle',
    sql: `
      CREATE TABLE throttle (
        "key" TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        reset_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX throttle_reset_at ON throttle (reset_at);
    `,
  },
]

/**
 * Brings a database up to the newest version in `migrations` and returns the versions it applied.
 *
 * Each migration runs in an IMMEDIATE transaction that first checks whether it is recorded, so two
 * processes opening a fresh file at once apply it exactly once: the second waits on the write
 * lock (busy_timeout), then sees the record and skips.
 */
export function migrate(
  db: Database.Database,
  migrations: readonly Migration[] = MIGRATIONS,
  now: () => number = Date.now,
): number[] {
  db.exec(`
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT
  `)
  const isApplied = db.prepare<[number]>('SELECT 1 FROM schema_migrations WHERE version = ?')
  const record = db.prepare<[number, string, number]>(
    'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
  )
  const applied: number[] = []
  for (const migration of migrations) {
    db.transaction(() => {
      if (isApplied.get(migration.version) !== undefined) return
      db.exec(migration.sql)
      record.run(migration.version, migration.name, now())
      applied.push(migration.version)
    }).immediate()
  }
  return applied
}
