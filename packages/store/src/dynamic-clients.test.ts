import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase } from '@tessera/test-support'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATIONS, migrate } from './internal/migrations.js'
import { PG_MIGRATIONS, migratePostgres } from './internal/pg-migrations.js'
import { openPostgresStore } from './postgres.js'
import { openSqliteStore } from './sqlite.js'
import type { Store } from './store.js'
import { consentRecord, day, registeredClient, sha256, t0 } from './test-utils/contract/index.js'

// Databases made before registrations and consents existed (schema version 15), upgraded by
// opening a store on them; and what the new tables hold at rest.

const opened: Store[] = []

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

/** Registers up to the bound, finds, and consents on an upgraded store, as an issuer would. */
async function useDynamicClients(store: Store): Promise<void> {
  const client = registeredClient()
  expect(await store.clientRegistrations.registerClient(client, 1)).toBe(true)
  expect(
    await store.clientRegistrations.registerClient(registeredClient({ clientId: 'c-2' }), 1),
  ).toBe(false)
  expect(
    await store.clientRegistrations.findRegisteredClient('acme', client.clientId),
  ).toStrictEqual(client)
  const consent = consentRecord({ expiresAt: t0 + day })
  await store.consents.saveConsent(consent)
  expect(
    await store.consents.findConsent('acme', 'alice', client.clientId, consent.resources, t0),
  ).toStrictEqual(consent)
}

/** What the registration row holds: hashes, never the secret or the token. */
const HASHES_AT_REST = {
  secret_hash: sha256('client-secret'),
  registration_token_hash: sha256('registration-token'),
}

describe('SQLite: a version 15 file', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-dynamic-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('gains registered clients and consents when opened, keeping its rows', async () => {
    const file = join(dir, 'v15.db')
    const old = new Database(file)
    migrate(old, MIGRATIONS.slice(0, 15))
    old
      .prepare('INSERT INTO marks (tenant, kind, id, expires_at) VALUES (?, ?, ?, ?)')
      .run('acme', 'jti', 'j-1', t0 + day)
    old.close()

    const store = await openSqliteStore(file)
    opened.push(store)
    expect(await store.marks.isMarked('acme', 'jti', 'j-1', t0)).toBe(true)
    await useDynamicClients(store)

    const db = new Database(file, { readonly: true })
    try {
      expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({
        v: MIGRATIONS.length,
      })
      expect(
        db.prepare('SELECT secret_hash, registration_token_hash FROM registered_clients').get(),
      ).toEqual(HASHES_AT_REST)
    } finally {
      db.close()
    }
  })
})

describe('PostgreSQL: a version 15 database', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database.drop()
  })

  it('gains registered clients and consents when opened, keeping its rows', async () => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      await migratePostgres(client, PG_MIGRATIONS.slice(0, 15))
      await client.query(
        "INSERT INTO marks (tenant, kind, id, expires_at) VALUES ('acme', 'jti', 'j-1', $1)",
        [t0 + day],
      )
      const tables = await client.query("SELECT 1 FROM pg_tables WHERE tablename = 'consents'")
      expect(tables.rowCount).toBe(0)
    } finally {
      await client.end()
    }

    const store = await openPostgresStore(database.url)
    opened.push(store)
    expect(await store.marks.isMarked('acme', 'jti', 'j-1', t0)).toBe(true)
    await useDynamicClients(store)

    const check = new pg.Client({ connectionString: database.url })
    await check.connect()
    try {
      const versions = await check.query('SELECT max(version) AS v FROM schema_migrations')
      expect(versions.rows).toEqual([{ v: PG_MIGRATIONS.length }])
      const row = await check.query(
        'SELECT secret_hash, registration_token_hash FROM registered_clients',
      )
      expect(row.rows).toEqual([HASHES_AT_REST])
      // Metadata that is not a JSON object is refused by the table itself.
      await expect(
        check.query(
          `INSERT INTO registered_clients (tenant, client_id, registration_token_hash, metadata,
             created_at, updated_at) VALUES ('acme', 'c-3', 'h', '[1]', 1, 2)`,
        ),
      ).rejects.toMatchObject({ code: '23514' })
    } finally {
      await check.end()
    }
  })
})
