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
 * storing it silently. Codes and refresh tokens are kept as SHA-256 hashes only; an
 * optional field absent from a record is NULL, never a string. `claims` holds a JSON object.
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
  {
    version: 3,
    name: 'authorization_codes',
    sql: `
      CREATE TABLE authorization_codes (
        tenant TEXT NOT NULL,
        code_hash TEXT NOT NULL,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        code_challenge TEXT,
        scope TEXT NOT NULL,
        sub TEXT NOT NULL,
        claims TEXT NOT NULL CHECK (json_valid(claims) AND json_type(claims) = 'object'),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        consumed_at INTEGER,
        PRIMARY KEY (tenant, code_hash)
      ) STRICT;
      CREATE INDEX authorization_codes_expires_at ON authorization_codes (expires_at);
    `,
  },
  {
    version: 4,
    name: 'refresh_tokens',
    sql: `
      CREATE TABLE refresh_families (
        tenant TEXT NOT NULL,
        family_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        sub TEXT NOT NULL,
        scope TEXT NOT NULL,
        claims TEXT NOT NULL CHECK (json_valid(claims) AND json_type(claims) = 'object'),
        code_hash TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER,
        PRIMARY KEY (tenant, family_id)
      ) STRICT;
      CREATE INDEX refresh_families_code ON refresh_families (tenant, code_hash);
      CREATE INDEX refresh_families_expires_at ON refresh_families (expires_at);
      CREATE TABLE refresh_tokens (
        tenant TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        family_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        spent_at INTEGER,
        PRIMARY KEY (tenant, token_hash),
        FOREIGN KEY (tenant, family_id) REFERENCES refresh_families (tenant, family_id)
          ON DELETE CASCADE
      ) STRICT;
      CREATE INDEX refresh_tokens_family ON refresh_tokens (tenant, family_id);
    `,
  },
  {
    version: 5,
    name: 'login_transactions',
    sql: `
      CREATE TABLE login_transactions (
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        state TEXT,
        code_challenge TEXT,
        scope TEXT NOT NULL,
        binding_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, id)
      ) STRICT;
      CREATE INDEX login_transactions_expires_at ON login_transactions (expires_at);
    `,
  },
  {
    // The kids of deleted keys: a new key never takes one (verifiers cache keys by kid).
    version: 6,
    name: 'pruned_kids',
    sql: `
      CREATE TABLE pruned_kids (
        tenant TEXT NOT NULL,
        kid TEXT NOT NULL,
        PRIMARY KEY (tenant, kid)
      ) STRICT;
    `,
  },
  {
    // Expiring marks (single use, revocations) and server-wide secrets (MarkStore, SecretStore).
    version: 7,
    name: 'marks_and_secrets',
    sql: `
      CREATE TABLE marks (
        tenant TEXT NOT NULL,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, kind, id)
      ) STRICT;
      CREATE INDEX marks_expires_at ON marks (expires_at);
      CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    // OpenID Connect: sign-in sessions, and the nonce, sid and auth_time a code carries into its
    // family. Lookups by (tenant, sid) are what a logout does to all three tables.
    version: 8,
    name: 'sessions',
    sql: `
      ALTER TABLE authorization_codes ADD COLUMN nonce TEXT;
      ALTER TABLE authorization_codes ADD COLUMN sid TEXT;
      ALTER TABLE authorization_codes ADD COLUMN auth_time INTEGER;
      CREATE INDEX authorization_codes_sid ON authorization_codes (tenant, sid);
      ALTER TABLE refresh_families ADD COLUMN sid TEXT;
      ALTER TABLE refresh_families ADD COLUMN auth_time INTEGER;
      CREATE INDEX refresh_families_sid ON refresh_families (tenant, sid);
      CREATE TABLE sessions (
        tenant TEXT NOT NULL,
        id_hash TEXT NOT NULL,
        sid TEXT NOT NULL,
        sub TEXT NOT NULL,
        claims TEXT NOT NULL CHECK (json_valid(claims) AND json_type(claims) = 'object'),
        auth_time INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        ended_at INTEGER,
        PRIMARY KEY (tenant, id_hash)
      ) STRICT;
      CREATE INDEX sessions_sid ON sessions (tenant, sid);
      CREATE INDEX sessions_expires_at ON sessions (expires_at);
      CREATE INDEX sessions_ended_at ON sessions (ended_at);
    `,
  },
  {
    // The key change feed: each write to a key stamps its tenant with the next number of one
    // counter, so a running issuer asks "which tenants changed since N" in one query instead of
    // re-reading every tenant's keys. Triggers, so that no writer (an issuer, `tessera keys`,
    // a later code path) can change a key without it being seen. SQLite has one writer at a
    // time: numbers become visible in order.
    version: 9,
    name: 'key_changes',
    sql: `
      CREATE TABLE key_change_counter (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL
      ) STRICT;
      INSERT INTO key_change_counter (id, seq) VALUES (1, 0);
      CREATE TABLE key_changes (
        tenant TEXT PRIMARY KEY,
        seq INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX key_changes_seq ON key_changes (seq);
      CREATE TRIGGER keys_inserted AFTER INSERT ON keys BEGIN
        UPDATE key_change_counter SET seq = seq + 1 WHERE id = 1;
        INSERT OR REPLACE INTO key_changes (tenant, seq)
          VALUES (NEW.tenant, (SELECT seq FROM key_change_counter WHERE id = 1));
      END;
      CREATE TRIGGER keys_updated AFTER UPDATE ON keys BEGIN
        UPDATE key_change_counter SET seq = seq + 1 WHERE id = 1;
        INSERT OR REPLACE INTO key_changes (tenant, seq)
          VALUES (NEW.tenant, (SELECT seq FROM key_change_counter WHERE id = 1));
      END;
      CREATE TRIGGER keys_deleted AFTER DELETE ON keys BEGIN
        UPDATE key_change_counter SET seq = seq + 1 WHERE id = 1;
        INSERT OR REPLACE INTO key_changes (tenant, seq)
          VALUES (OLD.tenant, (SELECT seq FROM key_change_counter WHERE id = 1));
      END;
    `,
  },
  {
    // Parse results of tenant files, by a digest of the file's text and the parser version, so
    // that a start on a warm database skips parsing. stored_at is indexed for prune, which
    // deletes old entries no running issuer still uses.
    version: 10,
    name: 'parsed_config',
    sql: `
      CREATE TABLE parsed_config (
        "key" TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        stored_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX parsed_config_stored_at ON parsed_config (stored_at);
    `,
  },
  {
    // Password checks in flight: one row per key of a hold, until it is settled or its lease
    // runs out. throttle.count holds settled failures only.
    version: 11,
    name: 'throttle_holds',
    sql: `
      CREATE TABLE throttle_holds (
        hold TEXT NOT NULL,
        "key" TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (hold, "key")
      ) STRICT;
      CREATE INDEX throttle_holds_key ON throttle_holds ("key", expires_at);
      CREATE INDEX throttle_holds_expires_at ON throttle_holds (expires_at);
    `,
  },
  {
    version: 12,
    name: 'client_auth_failures',
    sql: `
      CREATE TABLE client_auth_failures (
        "key" TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        reset_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX client_auth_failures_reset_at ON client_auth_failures (reset_at);
    `,
  },
  {
    // When a key published ahead starts signing (NULL: from created_at), and each tenant's
    // signing-algorithm history: whether an RS256 tenant may accept an HS256 token.
    version: 13,
    name: 'publish_ahead',
    sql: `
      ALTER TABLE keys ADD COLUMN signs_from INTEGER;
      CREATE TABLE tenant_algorithms (
        tenant TEXT PRIMARY KEY,
        algorithm TEXT NOT NULL CHECK (algorithm IN ('HS256', 'RS256')),
        since INTEGER NOT NULL,
        hs256_before INTEGER NOT NULL CHECK (hs256_before IN (0, 1))
      ) STRICT;
    `,
  },
  {
    // No code reads or writes login_transactions: a pending sign-in travels sealed (encrypted)
    // in the login form's csrf_token, bound to the tessera_login cookie, and a posted form is
    // made single use by a mark. Dropping the table drops its index and any rows left in it.
    version: 14,
    name: 'drop_login_transactions',
    sql: `
      DROP TABLE login_transactions;
    `,
  },
  {
    // The resources (RFC 8707) a sign-in named, space-separated; NULL: none. A token of the
    // sign-in may be for these only.
    version: 15,
    name: 'resource_indicators',
    sql: `
      ALTER TABLE authorization_codes ADD COLUMN resources TEXT;
      ALTER TABLE refresh_families ADD COLUMN resources TEXT;
    `,
  },
  {
    // Clients registered through RFC 7591, and users' consents to dynamic clients. A client's
    // secret and registration access token are kept as SHA-256 hashes only; secret_hash is NULL
    // for a public client. A consent's resources are space-separated, '' for none, and so are its
    // scopes. Consents are looked up by their key, deleted by client and purged by expiry.
    version: 16,
    name: 'dynamic_clients',
    sql: `
      CREATE TABLE registered_clients (
        tenant TEXT NOT NULL,
        client_id TEXT NOT NULL,
        secret_hash TEXT,
        registration_token_hash TEXT NOT NULL,
        metadata TEXT NOT NULL CHECK (json_valid(metadata) AND json_type(metadata) = 'object'),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, client_id)
      ) STRICT;
      CREATE TABLE consents (
        tenant TEXT NOT NULL,
        subject TEXT NOT NULL,
        client_id TEXT NOT NULL,
        resources TEXT NOT NULL,
        scopes TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, subject, client_id, resources)
      ) STRICT;
      CREATE INDEX consents_client ON consents (tenant, client_id);
      CREATE INDEX consents_expires_at ON consents (expires_at);
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
