import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS, migrate, type Migration } from './migrations.js'
import { parseCodeRow } from './tables/authorization-codes.js'
import { parseConsentRow } from './tables/consents.js'
import { parseFamilyRow } from './tables/refresh-families.js'
import { parseRegisteredClientRow } from './tables/registered-clients.js'

function tables(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    )
    .all()
    .map((row) => row.name)
}

describe('migrate', () => {
  it('numbers migrations 1, 2, 3… with no gap or repeat', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1))
  })

  it('applies every migration on an empty database, then none', () => {
    const db = new Database(':memory:')
    expect(migrate(db, MIGRATIONS, () => 42)).toEqual(MIGRATIONS.map((m) => m.version))
    expect(migrate(db)).toEqual([])
    expect(tables(db)).toEqual([
      'authorization_codes',
      'client_auth_failures',
      'consents',
      'key_change_counter',
      'key_changes',
      'keys',
      'marks',
      'parsed_config',
      'pruned_kids',
      'refresh_families',
      'refresh_tokens',
      'registered_clients',
      'schema_migrations',
      'secrets',
      'sessions',
      'tenant_algorithms',
      'throttle',
      'throttle_holds',
    ])
    expect(db.prepare('SELECT version, name, applied_at FROM schema_migrations').all()).toEqual(
      MIGRATIONS.map(({ version, name }) => ({ version, name, applied_at: 42 })),
    )
    db.close()
  })

  it('applies only what an older database lacks', () => {
    const db = new Database(':memory:')
    migrate(db, MIGRATIONS.slice(0, 1))
    expect(tables(db)).toEqual(['keys', 'schema_migrations'])
    expect(migrate(db)).toEqual(MIGRATIONS.slice(1).map((m) => m.version))
    db.close()
  })

  it('keeps the keys and throttle rows of a version 2 database it upgrades', () => {
    const db = new Database(':memory:')
    migrate(db, MIGRATIONS.slice(0, 2))
    db.exec(`
      INSERT INTO keys (tenant, kid, alg, public_jwk, private_key, created_at, state)
        VALUES ('acme', 'k1', 'RS256', '{}', '{}', 1, 'active');
      INSERT INTO throttle ("key", count, reset_at) VALUES ('acme:alice', 3, 10);
    `)
    expect(migrate(db)).toEqual(MIGRATIONS.slice(2).map((m) => m.version))
    expect(db.prepare('SELECT kid FROM keys').all()).toEqual([{ kid: 'k1' }])
    expect(db.prepare('SELECT count FROM throttle').all()).toEqual([{ count: 3 }])
    db.close()
  })

  it('adds the OpenID Connect columns to the codes and families of a version 7 database', () => {
    const db = new Database(':memory:')
    migrate(db, MIGRATIONS.slice(0, 7))
    db.exec(`
      INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri, code_challenge,
          scope, sub, claims, created_at, expires_at, consumed_at)
        VALUES ('acme', 'c1', 'web', 'https://app.example/cb', NULL, 'openid', 'alice', '{}', 1, 2,
          NULL);
      INSERT INTO refresh_families (tenant, family_id, client_id, sub, scope, claims, code_hash,
          created_at, expires_at, revoked_at)
        VALUES ('acme', 'f1', 'web', 'alice', 'openid', '{"a":1}', 'c1', 1, 2, NULL);
    `)
    expect(tables(db)).not.toContain('sessions')
    expect(migrate(db)).toEqual(MIGRATIONS.slice(7).map((m) => m.version))
    // Rows from before read back as they were: the new columns are NULL, so absent.
    expect(parseCodeRow(db.prepare('SELECT * FROM authorization_codes').get())).toStrictEqual({
      codeHash: 'c1',
      tenant: 'acme',
      clientId: 'web',
      redirectUri: 'https://app.example/cb',
      scope: 'openid',
      sub: 'alice',
      claims: {},
      createdAt: 1,
      expiresAt: 2,
    })
    expect(parseFamilyRow(db.prepare('SELECT * FROM refresh_families').get())).toStrictEqual({
      familyId: 'f1',
      tenant: 'acme',
      clientId: 'web',
      sub: 'alice',
      scope: 'openid',
      claims: { a: 1 },
      codeHash: 'c1',
      createdAt: 1,
      expiresAt: 2,
    })
    const indexes = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%_sid' ORDER BY name",
      )
      .all()
      .map((row) => row.name)
    expect(indexes).toEqual(['authorization_codes_sid', 'refresh_families_sid', 'sessions_sid'])
    // A sid is looked up by index, not by a scan of the table.
    for (const table of ['sessions', 'authorization_codes', 'refresh_families']) {
      const plan = db
        .prepare<[], { detail: string }>(
          `EXPLAIN QUERY PLAN SELECT * FROM ${table} WHERE tenant = 'acme' AND sid = 's'`,
        )
        .all()
      expect(plan.map((step) => step.detail).join('\n')).toMatch(/USING INDEX \w+_sid/)
    }
    db.close()
  })

  it('adds registered clients and consents to a version 15 database, keeping its rows', () => {
    const db = new Database(':memory:')
    migrate(db, MIGRATIONS.slice(0, 15))
    db.exec(`
      INSERT INTO marks (tenant, kind, id, expires_at) VALUES ('acme', 'jti', 'j1', 5);
      INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri, scope, sub,
          claims, created_at, expires_at, resources)
        VALUES ('acme', 'c1', 'web', 'https://app.example/cb', 'openid', 'alice', '{}', 1, 2,
          'https://mcp.acme.test/mcp');
    `)
    expect(tables(db)).not.toContain('registered_clients')
    expect(migrate(db)).toEqual(MIGRATIONS.slice(15).map((m) => m.version))
    expect(db.prepare('SELECT id FROM marks').all()).toEqual([{ id: 'j1' }])
    expect(db.prepare('SELECT resources FROM authorization_codes').all()).toEqual([
      { resources: 'https://mcp.acme.test/mcp' },
    ])
    db.exec(`
      INSERT INTO registered_clients (tenant, client_id, secret_hash, registration_token_hash,
          metadata, created_at, updated_at)
        VALUES ('acme', 'c-1', NULL, 'h', '{"client_name":"Notes"}', 1, 2);
      INSERT INTO consents (tenant, subject, client_id, resources, scopes, expires_at)
        VALUES ('acme', 'alice', 'c-1', '', 'a b', 3);
    `)
    expect(
      parseRegisteredClientRow(db.prepare('SELECT * FROM registered_clients').get()),
    ).toStrictEqual({
      tenant: 'acme',
      clientId: 'c-1',
      registrationTokenHash: 'h',
      metadata: { client_name: 'Notes' },
      createdAt: 1,
      updatedAt: 2,
    })
    expect(parseConsentRow(db.prepare('SELECT * FROM consents').get())).toStrictEqual({
      tenant: 'acme',
      subject: 'alice',
      clientId: 'c-1',
      resources: '',
      scopes: ['a', 'b'],
      expiresAt: 3,
    })
    // Metadata that is not a JSON object is refused by the table itself.
    expect(() =>
      db.exec(`INSERT INTO registered_clients VALUES ('acme', 'c-2', NULL, 'h', '[1]', 1, 2)`),
    ).toThrow(/CHECK constraint failed/)
    // deleteConsents and the purge find consents by index, not by a scan of the table.
    for (const where of ["tenant = 'acme' AND client_id = 'c-1'", 'expires_at <= 5']) {
      const plan = db
        .prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN DELETE FROM consents WHERE ${where}`)
        .all()
      expect(plan.map((step) => step.detail).join('\n')).toMatch(/USING INDEX consents_/)
    }
    db.close()
  })

  it('rolls a failing migration back whole and records nothing of it', () => {
    const db = new Database(':memory:')
    const broken: Migration = {
      version: MIGRATIONS.length + 1,
      name: 'broken',
      sql: 'CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);',
    }
    expect(() => migrate(db, [...MIGRATIONS, broken])).toThrow(/no_such_table/)
    expect(tables(db)).not.toContain('half_done')
    expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({
      v: MIGRATIONS.length,
    })
    db.close()
  })
})
