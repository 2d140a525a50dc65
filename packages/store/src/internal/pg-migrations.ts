import type { ClientBase } from 'pg'

/** One step of the PostgreSQL schema, applied once and recorded in `schema_migrations`. */
export interface PgMigration {
  /** Consecutive from 1; never renumber or edit a released migration, append a new one. */
  readonly version: number
  /** Short description, recorded in `schema_migrations`. */
  readonly name: string
  /** One or more statements. */
  readonly sql: string
}

/**
 * The key of the advisory lock that serialises migrations. Advisory locks live per database, so
 * this only has to be unique among the locks Tessera itself takes. ASCII "tess" + 1.
 */
export const MIGRATION_LOCK = 0x7465_7373_01

/**
 * The schema, oldest first; the same tables, columns and versions as the SQLite schema, in
 * PostgreSQL types:
 *
 * - times are epoch milliseconds in BIGINT (the adapter reads them back as numbers);
 * - identifiers and hashes are TEXT COLLATE "C": compared and sorted byte for byte, as SQLite
 *   does, whatever the database's locale (`listKeys` orders by kid);
 * - `claims` is JSON, not JSONB: JSON keeps the text it is given, and accepts the `\u0000` and
 *   lone-surrogate escapes that JSON.stringify may write and JSONB refuses;
 * - a login transaction's `state`, a throttle `key`, a mark's `id` and a code's `nonce` are BYTEA
 *   (UTF-8): they come from the client verbatim and may hold U+0000, which a PostgreSQL TEXT value cannot.
 *
 * Codes and refresh tokens are kept as SHA-256 hashes only.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'keys',
    sql: `
      CREATE TABLE keys (
        tenant TEXT COLLATE "C" NOT NULL,
        kid TEXT COLLATE "C" NOT NULL,
        alg TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        private_key TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('active', 'retired', 'revoked')),
        retired_at BIGINT,
        PRIMARY KEY (tenant, kid)
      );
    `,
  },
  {
    version: 2,
    name: 'throttle',
    sql: `
      CREATE TABLE throttle (
        "key" BYTEA PRIMARY KEY,
        count INTEGER NOT NULL,
        reset_at BIGINT NOT NULL
      );
      CREATE INDEX throttle_reset_at ON throttle (reset_at);
    `,
  },
  {
    version: 3,
    name: 'authorization_codes',
    sql: `
      CREATE TABLE authorization_codes (
        tenant TEXT COLLATE "C" NOT NULL,
        code_hash TEXT COLLATE "C" NOT NULL,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        code_challenge TEXT,
        scope TEXT NOT NULL,
        sub TEXT NOT NULL,
        claims JSON NOT NULL CHECK (json_typeof(claims) = 'object'),
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT,
        PRIMARY KEY (tenant, code_hash)
      );
      CREATE INDEX authorization_codes_expires_at ON authorization_codes (expires_at);
    `,
  },
  {
    version: 4,
    name: 'refresh_tokens',
    sql: `
      CREATE TABLE refresh_families (
        tenant TEXT COLLATE "C" NOT NULL,
        family_id TEXT COLLATE "C" NOT NULL,
        client_id TEXT NOT NULL,
        sub TEXT NOT NULL,
        scope TEXT NOT NULL,
        claims JSON NOT NULL CHECK (json_typeof(claims) = 'object'),
        code_hash TEXT COLLATE "C",
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        revoked_at BIGINT,
        PRIMARY KEY (tenant, family_id)
      );
      CREATE INDEX refresh_families_code ON refresh_families (tenant, code_hash);
      CREATE INDEX refresh_families_expires_at ON refresh_families (expires_at);
      CREATE TABLE refresh_tokens (
        tenant TEXT COLLATE "C" NOT NULL,
        token_hash TEXT COLLATE "C" NOT NULL,
        family_id TEXT COLLATE "C" NOT NULL,
        created_at BIGINT NOT NULL,
        spent_at BIGINT,
        PRIMARY KEY (tenant, token_hash),
        FOREIGN KEY (tenant, family_id) REFERENCES refresh_families (tenant, family_id)
          ON DELETE CASCADE
      );
      CREATE INDEX refresh_tokens_family ON refresh_tokens (tenant, family_id);
    `,
  },
  {
    version: 5,
    name: 'login_transactions',
    sql: `
      CREATE TABLE login_transactions (
        tenant TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        state BYTEA,
        code_challenge TEXT,
        scope TEXT NOT NULL,
        binding_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, id)
      );
      CREATE INDEX login_transactions_expires_at ON login_transactions (expires_at);
    `,
  },
  {
    // The kids of deleted keys: a new key never takes one (verifiers cache keys by kid).
    version: 6,
    name: 'pruned_kids',
    sql: `
      CREATE TABLE pruned_kids (
        tenant TEXT COLLATE "C" NOT NULL,
        kid TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (tenant, kid)
      );
    `,
  },
  {
    // Expiring marks (single use, revocations) and server-wide secrets (MarkStore, SecretStore).
    version: 7,
    name: 'marks_and_secrets',
    sql: `
      CREATE TABLE marks (
        tenant TEXT COLLATE "C" NOT NULL,
        kind TEXT COLLATE "C" NOT NULL,
        id BYTEA NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, kind, id)
      );
      CREATE INDEX marks_expires_at ON marks (expires_at);
      CREATE TABLE secrets (
        name TEXT COLLATE "C" PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    // OpenID Connect: sign-in sessions, and the nonce, sid and auth_time a code carries into its
    // family. Lookups by (tenant, sid) are what a logout does to all three tables. A nonce comes
    // from the client verbatim, so it is BYTEA, like a login transaction's state.
    version: 8,
    name: 'sessions',
    sql: `
      ALTER TABLE authorization_codes
        ADD COLUMN nonce BYTEA,
        ADD COLUMN sid TEXT COLLATE "C",
        ADD COLUMN auth_time BIGINT;
      CREATE INDEX authorization_codes_sid ON authorization_codes (tenant, sid);
      ALTER TABLE refresh_families
        ADD COLUMN sid TEXT COLLATE "C",
        ADD COLUMN auth_time BIGINT;
      CREATE INDEX refresh_families_sid ON refresh_families (tenant, sid);
      CREATE TABLE sessions (
        tenant TEXT COLLATE "C" NOT NULL,
        id_hash TEXT COLLATE "C" NOT NULL,
        sid TEXT COLLATE "C" NOT NULL,
        sub TEXT NOT NULL,
        claims JSON NOT NULL CHECK (json_typeof(claims) = 'object'),
        auth_time BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        ended_at BIGINT,
        PRIMARY KEY (tenant, id_hash)
      );
      CREATE INDEX sessions_sid ON sessions (tenant, sid);
      CREATE INDEX sessions_expires_at ON sessions (expires_at);
      CREATE INDEX sessions_ended_at ON sessions (ended_at);
    `,
  },
  {
    // The key change feed (see the SQLite migration 9). The number comes from one counter row,
    // not a sequence: the row stays locked until the writing transaction commits, so numbers
    // become visible in the order they were taken, and a reader that saw N has seen every
    // change below N. A sequence hands out numbers that can commit out of order, and a poll
    // past a late one would miss it for good. Key writes are rare; serialising them is free.
    version: 9,
    name: 'key_changes',
    sql: `
      CREATE TABLE key_change_counter (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq BIGINT NOT NULL
      );
      INSERT INTO key_change_counter (id, seq) VALUES (1, 0);
      CREATE TABLE key_changes (
        tenant TEXT COLLATE "C" PRIMARY KEY,
        seq BIGINT NOT NULL
      );
      CREATE INDEX key_changes_seq ON key_changes (seq);
      CREATE FUNCTION tessera_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        next_seq BIGINT;
        changed TEXT;
      BEGIN
        UPDATE key_change_counter SET seq = seq + 1 WHERE id = 1 RETURNING seq INTO next_seq;
        IF TG_OP = 'DELETE' THEN changed := OLD.tenant; ELSE changed := NEW.tenant; END IF;
        INSERT INTO key_changes (tenant, seq) VALUES (changed, next_seq)
          ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq;
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER keys_changed AFTER INSERT OR UPDATE OR DELETE ON keys
        FOR EACH ROW EXECUTE FUNCTION tessera_key_changed();
    `,
  },
  {
    // Parse results of tenant files (see the SQLite migration 10).
    version: 10,
    name: 'parsed_config',
    sql: `
      CREATE TABLE parsed_config (
        "key" TEXT COLLATE "C" PRIMARY KEY,
        value TEXT NOT NULL,
        stored_at BIGINT NOT NULL
      );
      CREATE INDEX parsed_config_stored_at ON parsed_config (stored_at);
    `,
  },
  {
    // Password checks in flight (see the SQLite migration 11); keys are BYTEA as in throttle.
    version: 11,
    name: 'throttle_holds',
    sql: `
      CREATE TABLE throttle_holds (
        hold TEXT COLLATE "C" NOT NULL,
        "key" BYTEA NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (hold, "key")
      );
      CREATE INDEX throttle_holds_key ON throttle_holds ("key", expires_at);
      CREATE INDEX throttle_holds_expires_at ON throttle_holds (expires_at);
    `,
  },
  {
    version: 12,
    name: 'client_auth_failures',
    sql: `
      CREATE TABLE client_auth_failures (
        "key" TEXT COLLATE "C" PRIMARY KEY,
        count INTEGER NOT NULL,
        reset_at BIGINT NOT NULL
      );
      CREATE INDEX client_auth_failures_reset_at ON client_auth_failures (reset_at);
    `,
  },
  {
    // Keys published ahead and the tenants' algorithm history (see the SQLite migration 13).
    version: 13,
    name: 'publish_ahead',
    sql: `
      ALTER TABLE keys ADD COLUMN signs_from BIGINT;
      CREATE TABLE tenant_algorithms (
        tenant TEXT COLLATE "C" PRIMARY KEY,
        algorithm TEXT NOT NULL CHECK (algorithm IN ('HS256', 'RS256')),
        since BIGINT NOT NULL,
        hs256_before INTEGER NOT NULL CHECK (hs256_before IN (0, 1))
      );
    `,
  },
  {
    // No code reads or writes login_transactions (see the SQLite migration 14).
    version: 14,
    name: 'drop_login_transactions',
    sql: `
      DROP TABLE login_transactions;
    `,
  },
  {
    // The resources a sign-in named (see the SQLite migration 15).
    version: 15,
    name: 'resource_indicators',
    sql: `
      ALTER TABLE authorization_codes ADD COLUMN resources TEXT;
      ALTER TABLE refresh_families ADD COLUMN resources TEXT;
    `,
  },
  {
    // Registered clients and consents (see the SQLite migration 16); metadata is JSON, as claims.
    version: 16,
    name: 'dynamic_clients',
    sql: `
      CREATE TABLE registered_clients (
        tenant TEXT COLLATE "C" NOT NULL,
        client_id TEXT COLLATE "C" NOT NULL,
        secret_hash TEXT,
        registration_token_hash TEXT NOT NULL,
        metadata JSON NOT NULL CHECK (json_typeof(metadata) = 'object'),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, client_id)
      );
      CREATE TABLE consents (
        tenant TEXT COLLATE "C" NOT NULL,
        subject TEXT COLLATE "C" NOT NULL,
        client_id TEXT COLLATE "C" NOT NULL,
        resources TEXT COLLATE "C" NOT NULL,
        scopes TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, subject, client_id, resources)
      );
      CREATE INDEX consents_client ON consents (tenant, client_id);
      CREATE INDEX consents_expires_at ON consents (expires_at);
    `,
  },
]

/**
 * Brings a database up to the newest version in `migrations` and returns the versions it applied.
 *
 * One transaction under a transaction-scoped advisory lock: replicas starting together queue on
 * the lock, and each one after the first finds the versions recorded and applies nothing. DDL is
 * transactional in PostgreSQL, so a failing migration leaves no trace of the whole run. The
 * client must not be inside a transaction.
 */
export async function migratePostgres(
  client: ClientBase,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
  now: () => number = Date.now,
): Promise<number[]> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at BIGINT NOT NULL
      )
    `)
    const recorded = await client.query<{ version: number }>(
      'SELECT version FROM schema_migrations',
    )
    const done = new Set(recorded.rows.map((row) => row.version))
    const applied: number[] = []
    for (const migration of migrations) {
      if (done.has(migration.version)) continue
      await client.query(migration.sql)
      await client.query(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
        [migration.version, migration.name, now()],
      )
      applied.push(migration.version)
    }
    await client.query('COMMIT')
    return applied
  } catch (error) {
    // A failed ROLLBACK means a broken connection; the caller discards the client anyway.
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}
