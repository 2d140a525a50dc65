import { createServer, type Server, type Socket } from 'node:net'
import type { RotateResult } from '@tessera/grants'
import {
  createTestDatabase,
  startTcpProxy,
  type TcpProxy,
  type TestDatabase,
} from '@tessera/test-support'
import pg from 'pg'
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  expectTypeOf,
  it,
  vi,
} from 'vitest'
import { StoreError } from './errors.js'
import { openPostgresStore as exported, type PostgresStoreOptions } from './index.js'
import { PG_MIGRATIONS, migratePostgres, type PgMigration } from './internal/pg-migrations.js'
import { openPostgresStore } from './postgres.js'
import { openStore, type OpenStoreOptions, type Store } from './store.js'
import {
  attemptsHeld,
  codeRecord,
  runReplicaContract,
  runStoreContract,
  clearOne,
  failOne,
  failuresOf,
  refreshFamily,
  reserveOne,
  sessionRecord,
  sha256,
  startFamily,
  storedKey,
  t0,
} from './test-utils/contract/index.js'

const TABLES = [
  'keys',
  'pruned_kids',
  'throttle',
  'throttle_holds',
  'authorization_codes',
  'refresh_tokens',
  'refresh_families',
  'marks',
  'secrets',
  'sessions',
  'key_changes',
  'parsed_config',
  'client_auth_failures',
  'tenant_algorithms',
  'registered_clients',
  'consents',
]

// One database for the file, migrated once and emptied before each test: creating a database
// per test would cost a third of a second each.
let db: TestDatabase
let raw: pg.Pool
const opened: Store[] = []
const scratch: TestDatabase[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  await (await openPostgresStore(db.url)).close()
  raw = new pg.Pool({ connectionString: db.url, max: 2 })
})

afterAll(async () => {
  await raw.end()
  await db.drop()
})

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
  await Promise.all(scratch.splice(0).map((database) => database.drop()))
})

async function emptyTables(): Promise<void> {
  await raw.query(`TRUNCATE ${TABLES.join(', ')}`)
  // The counter's one row stays: the feed's numbers only grow, across tests too.
}

/** A store on the file's database, closed after the test. */
async function open(url = db.url, options?: PostgresStoreOptions): Promise<Store> {
  const store = await openPostgresStore(url, options)
  opened.push(store)
  return store
}

/** A database of the test's own, dropped after it. */
async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase()
  scratch.push(database)
  return database
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await raw.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, values)
  return Number(rows[0]?.n)
}

async function failure(promise: Promise<unknown>): Promise<StoreError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StoreError)
  return error as StoreError
}

runStoreContract('postgres', async () => {
  await emptyTables()
  return openPostgresStore(db.url)
})

runReplicaContract('postgres', {
  async fresh() {
    await emptyTables()
    return db.url
  },
  open: (url) => open(url),
  count: (_url, from) => count(from),
})

/** rotateRefreshTokenForClient of `store` for a token of acme. */
function rotateForClient(
  store: Store,
  clientId: string,
  oldHash: string,
  newHash: string,
  now: number,
): Promise<RotateResult> {
  return store.refreshTokens.rotateRefreshTokenForClient('acme', clientId, oldHash, newHash, now)
}

/** Connections of the store's pools that wait for a row lock another transaction holds. */
function waitingOnLock(): Promise<number> {
  return count(`pg_stat_activity WHERE datname = current_database()
    AND application_name = 'tessera' AND wait_event_type = 'Lock'`)
}

/**
 * Runs `statements` in a transaction on another connection, as another replica would, holding
 * its row locks; starts `operation`, waits until it waits for one of those locks, then commits
 * and returns what `operation` answers.
 */
async function afterCommitOf<T>(
  statements: [text: string, values: unknown[]][],
  operation: () => Promise<T>,
): Promise<T> {
  const holder = await raw.connect()
  try {
    await holder.query('BEGIN')
    for (const [text, values] of statements) await holder.query(text, values)
    let settled = false
    const result = operation().finally(() => {
      settled = true
    })
    // Awaited below; until then, a failure must not count as unhandled.
    result.catch(() => undefined)
    await expect.poll(async () => settled || (await waitingOnLock()) > 0).toBe(true)
    await holder.query('COMMIT')
    return await result
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined)
    holder.release()
  }
}

describe('openPostgresStore', () => {
  beforeEach(emptyTables)

  it('numbers key changes in commit order, so a poll never passes one still uncommitted', async () => {
    const store = await open()
    const since = await store.keys.keyChangeCursor()
    const early = storedKey({ tenant: 'early' })
    const holder = await raw.connect()
    try {
      // A writer that took its number and has not committed yet.
      await holder.query('BEGIN')
      await holder.query(
        `INSERT INTO keys (tenant, kid, alg, public_jwk, private_key, created_at, state)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [early.tenant, early.kid, early.alg, early.publicJwk, early.privateKey, t0, 'active'],
      )
      // A second writer waits for it: its number cannot become visible before the first's.
      let inserted = false
      const late = store.keys.insertKeyIfAbsent(storedKey({ tenant: 'late' })).finally(() => {
        inserted = true
      })
      late.catch(() => undefined)
      await expect.poll(async () => inserted || (await waitingOnLock()) > 0).toBe(true)
      expect(inserted).toBe(false)
      // A poll meanwhile sees neither, and its cursor does not pass the first.
      const during = await store.keys.keyChangesSince(since)
      expect(during).toEqual({ cursor: since, tenants: [] })
      await holder.query('COMMIT')
      expect(await late).toBe(true)
      const after = await store.keys.keyChangesSince(during.cursor)
      expect(after.tenants.sort()).toEqual(['early', 'late'])
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined)
      holder.release()
    }
  })

  it('is exported with its options type', () => {
    expectTypeOf(exported).toEqualTypeOf<
      (url: string, options?: PostgresStoreOptions) => Promise<Store>
    >()
    expect(exported).toBe(openPostgresStore)
  })

  it('migrates an empty database, then applies each migration only once', async () => {
    const database = await freshDatabase()
    const versions = async (): Promise<unknown[]> => {
      const client = new pg.Client({ connectionString: database.url })
      await client.connect()
      try {
        const { rows } = await client.query<Record<string, unknown>>(
          'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
        )
        return rows
      } finally {
        await client.end()
      }
    }
    await (await open(database.url)).close()
    const before = await versions()
    expect(before).toMatchObject(PG_MIGRATIONS.map(({ version, name }) => ({ version, name })))
    await (await open(database.url)).close()
    await (await open(database.url)).close()
    expect(await versions()).toEqual(before)
  })

  it('lets four stores open one empty database at once, migrating it once', async () => {
    const database = await freshDatabase()
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(database.url)))
    const results = await Promise.all(
      stores.map((store, i) =>
        store.keys.insertKeyIfAbsent(storedKey({ publicJwk: JSON.stringify({ from: i }) })),
      ),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version')
    await client.end()
    expect(rows).toEqual(PG_MIGRATIONS.map(({ version }) => ({ version })))
  })

  it('numbers migrations 1, 2, 3… with no gap or repeat', () => {
    expect(PG_MIGRATIONS.map((m) => m.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1))
  })

  it('rolls a failing run of migrations back whole and records nothing of it', async () => {
    const database = await freshDatabase()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const broken: PgMigration = {
        version: PG_MIGRATIONS.length + 1,
        name: 'broken',
        sql: 'CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);',
      }
      const tables = async (): Promise<string[]> =>
        (
          await client.query<{ name: string }>(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
          )
        ).rows.map((row) => row.name)
      await expect(migratePostgres(client, [...PG_MIGRATIONS, broken])).rejects.toThrow(
        /no_such_table/,
      )
      expect(await tables()).toEqual([])
      expect(await migratePostgres(client, PG_MIGRATIONS.slice(0, 2), () => 42)).toEqual([1, 2])
      expect(await migratePostgres(client)).toEqual(PG_MIGRATIONS.slice(2).map((m) => m.version))
      await expect(migratePostgres(client, [...PG_MIGRATIONS, broken])).rejects.toThrow(
        /no_such_table/,
      )
      expect(await tables()).toEqual([...TABLES, 'key_change_counter', 'schema_migrations'].sort())
      const { rows } = await client.query('SELECT max(version) AS v FROM schema_migrations')
      expect(rows).toEqual([{ v: PG_MIGRATIONS.length }])
    } finally {
      await client.end()
    }
  })

  it('keeps data across close and reopen', async () => {
    const first = await open()
    await first.keys.insertKeyIfAbsent(storedKey())
    await failOne(first, 'acme:alice', { limit: 1, now: 1_000, windowMs: 60_000 })
    await first.close()

    const second = await open()
    expect(await second.keys.listKeys('acme')).toEqual([storedKey()])
    expect(await reserveOne(second, 'acme:alice', { limit: 1, now: 2_000 })).toEqual({
      status: 'blocked',
      key: 'acme:alice',
      resetAt: 61_000,
    })
  })

  it('reads BIGINT times as numbers without touching pg’s global type parsers', async () => {
    const store = await open()
    await store.keys.insertKeyIfAbsent(storedKey({ createdAt: 8_640_000_000_000_000 }))
    const [key] = await store.keys.listKeys('acme')
    expect(key?.createdAt).toBe(8_640_000_000_000_000)
    const { rows } = await raw.query<{ created_at: unknown }>('SELECT created_at FROM keys')
    expect(rows).toEqual([{ created_at: '8640000000000000' }])
  })

  it('rejects a stored time beyond what a number holds exactly instead of rounding it', async () => {
    const store = await open()
    await store.keys.insertKeyIfAbsent(storedKey())
    await raw.query('UPDATE keys SET created_at = 9007199254740993')
    expect((await failure(store.keys.listKeys('acme'))).code).toBe('ERR_STORE_ROW_INVALID')
  })

  it('rejects a stored row of the wrong shape instead of returning it', async () => {
    const store = await open()
    await raw.query(
      `INSERT INTO keys (tenant, kid, alg, public_jwk, private_key, created_at, state)
       VALUES ('acme', '2025-03-10', 'HS256', '{}', '{}', 0, 'active')`,
    )
    expect((await failure(store.keys.listKeys('acme'))).code).toBe('ERR_STORE_ROW_INVALID')
  })

  it('keeps claims as the JSON text it was given, escapes included', async () => {
    const store = await open()
    const claims = { nul: 'a\u0000b', lone: '\ud800', order: { z: 1, a: 2 } }
    await store.codes.saveCode(codeRecord({ claims }))
    expect((await store.codes.findCode('acme', sha256('code-1')))?.claims).toStrictEqual(claims)
    const { rows } = await raw.query<{ claims: unknown }>(
      'SELECT claims::text AS claims FROM authorization_codes',
    )
    expect(rows).toEqual([{ claims: JSON.stringify(claims) }])
  })

  it('refuses claims that are not a JSON object at the database too', async () => {
    await open()
    await expect(
      raw.query(
        `INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri, scope, sub,
           claims, created_at, expires_at) VALUES ('acme', 'h', 'web', 'u', 's', 'alice', '[1]', 0, 1)`,
      ),
    ).rejects.toMatchObject({ code: '23514' })
  })

  it('drops login_transactions from a version 13 database, keeping its other rows', async () => {
    const database = await freshDatabase()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const code = codeRecord()
    try {
      await migratePostgres(client, PG_MIGRATIONS.slice(0, 13))
      await client.query(
        `INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri,
           code_challenge, scope, sub, claims, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          code.tenant,
          code.codeHash,
          code.clientId,
          code.redirectUri,
          code.codeChallenge,
          code.scope,
          code.sub,
          JSON.stringify(code.claims),
          code.createdAt,
          code.expiresAt,
        ],
      )
      for (const [id, expiresAt] of [
        ['old', t0 + 600_000],
        ['live', t0 + 600_001],
      ] as const) {
        await client.query(
          `INSERT INTO login_transactions (tenant, id, client_id, redirect_uri, scope, binding_hash,
             created_at, expires_at) VALUES ('acme', $1, 'web', 'https://app.example/cb', '', 'b', $2, $3)`,
          [id, t0, expiresAt],
        )
      }
    } finally {
      await client.end()
    }
    const store = await open(database.url)
    const check = new pg.Client({ connectionString: database.url })
    await check.connect()
    try {
      const left = await check.query(
        "SELECT relname FROM pg_class WHERE relname LIKE 'login_transactions%'",
      )
      expect(left.rows).toEqual([])
      const versions = await check.query('SELECT max(version) AS v FROM schema_migrations')
      expect(versions.rows).toEqual([{ v: PG_MIGRATIONS.length }])
    } finally {
      await check.end()
    }
    expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual(code)
    expect(
      await store.codes.redeemCode('acme', code.codeHash, t0, {
        family: refreshFamily(),
        tokenHash: sha256('rt'),
      }),
    ).toBe(true)
    expect(await store.marks.mark('acme', 'login', 'form-1', t0 + 1, t0)).toBe(true)
    expect(await store.expiry.purgeExpired(t0 + 1)).toBe(1)
  })

  it('stores a code’s nonce as its UTF-8 bytes, U+0000 included', async () => {
    const store = await open()
    const nonce = 'a\u0000\u00e9\u{1F600}'
    await store.codes.saveCode(codeRecord({ nonce, sid: 'sid-1', authTime: t0 }))
    expect(await store.codes.findCode('acme', sha256('code-1'))).toStrictEqual(
      codeRecord({ nonce, sid: 'sid-1', authTime: t0 }),
    )
    const { rows } = await raw.query<{ nonce: string }>(
      "SELECT encode(nonce, 'hex') AS nonce FROM authorization_codes",
    )
    expect(rows).toEqual([{ nonce: Buffer.from(nonce).toString('hex') }])
  })

  it('migrates a version 7 database in place, keeping its codes and families', async () => {
    const database = await freshDatabase()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const code = codeRecord()
    delete code.codeChallenge
    try {
      expect(await migratePostgres(client, PG_MIGRATIONS.slice(0, 7))).toEqual([
        1, 2, 3, 4, 5, 6, 7,
      ])
      await client.query(
        `INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri, scope, sub,
           claims, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          code.tenant,
          code.codeHash,
          code.clientId,
          code.redirectUri,
          code.scope,
          code.sub,
          JSON.stringify(code.claims),
          code.createdAt,
          code.expiresAt,
        ],
      )
      await client.query(
        `INSERT INTO refresh_families (tenant, family_id, client_id, sub, scope, claims,
           created_at, expires_at) VALUES ('acme', 'old', 'web', 'alice', 'openid', '{}', $1, $2)`,
        [t0, t0 + 60_000],
      )
    } finally {
      await client.end()
    }
    const store = await open(database.url)
    expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual(code)
    expect(await store.refreshTokens.findFamily('acme', 'old')).toStrictEqual({
      familyId: 'old',
      tenant: 'acme',
      clientId: 'web',
      sub: 'alice',
      scope: 'openid',
      claims: {},
      createdAt: t0,
      expiresAt: t0 + 60_000,
    })
    const family = refreshFamily({ sid: 'sid-1', authTime: t0 })
    expect(await store.codes.redeemCode('acme', code.codeHash, t0, { family })).toBe(true)
    await store.sessions.createSession(sessionRecord())
    expect(await store.sessions.endSession('acme', 'sid-1', t0 + 1)).toBe(true)
    expect((await store.refreshTokens.findFamily('acme', family.familyId))?.revokedAt).toBe(t0 + 1)
    expect(await store.refreshTokens.findFamily('acme', 'old')).not.toHaveProperty('revokedAt')
    const check = new pg.Client({ connectionString: database.url })
    await check.connect()
    try {
      const versions = await check.query('SELECT max(version) AS v FROM schema_migrations')
      expect(versions.rows).toEqual([{ v: PG_MIGRATIONS.length }])
      const indexes = await check.query<{ name: string }>(
        "SELECT indexname AS name FROM pg_indexes WHERE indexname LIKE '%_sid' ORDER BY 1",
      )
      expect(indexes.rows.map((row) => row.name)).toEqual([
        'authorization_codes_sid',
        'refresh_families_sid',
        'sessions_sid',
      ])
    } finally {
      await check.end()
    }
  })

  it('counts throttle keys byte for byte, U+0000 included', async () => {
    const store = await open()
    const window = { limit: 5, now: t0, windowMs: 60_000 }
    await failOne(store, 'user:acme:a\u0000b', window)
    await failOne(store, 'user:acme:a\u0000b', window)
    await failOne(store, 'user:acme:a', window)
    await reserveOne(store, 'user:acme:a', window)
    expect(await failuresOf(store, 'user:acme:a\u0000b', t0)).toBe(2)
    expect(await attemptsHeld(store, 'user:acme:a', t0)).toBe(2)
    await clearOne(store, 'user:acme:a\u0000b', t0)
    expect(await attemptsHeld(store, 'user:acme:a\u0000b', t0)).toBe(0)
  })

  it('refuses U+0000 in a field PostgreSQL stores as text with a TypeError, storing nothing', async () => {
    const store = await open()
    await expect(
      store.codes.saveCode(codeRecord({ codeHash: sha256('nul'), sub: 'alice\u0000' })),
    ).rejects.toThrow(/U\+0000/)
    await store.codes.saveCode(codeRecord())
    await expect(
      store.codes.redeemCode('acme', sha256('code-1'), t0, {
        family: refreshFamily({ sub: 'a\u0000' }),
        tokenHash: sha256('rt-1'),
      }),
    ).rejects.toThrow(TypeError)
    expect(await count('authorization_codes')).toBe(1)
    expect(await store.codes.findCode('acme', sha256('code-1'))).not.toHaveProperty('consumedAt')
    expect(await count('refresh_families')).toBe(0)
  })

  it('keeps only hashes of codes and refresh tokens, never the values in clear', async () => {
    const store = await open()
    const code = 'SplxlOBeZQQYbYS6WxSbIA'
    const tokens = ['tGzv3JOkF0XG5Qx2TlKWIA', '8xLOxBtZp8']
    await store.codes.saveCode(codeRecord({ codeHash: sha256(code) }))
    await store.codes.redeemCode('acme', sha256(code), t0, {
      family: refreshFamily({ codeHash: sha256(code) }),
      tokenHash: sha256(tokens[0] ?? ''),
    })
    await store.refreshTokens.rotateRefreshToken(
      'acme',
      sha256(tokens[0] ?? ''),
      sha256(tokens[1] ?? ''),
      t0 + 1,
    )
    const cookie = 'q3vN5x0c3qZbq2Yf8m1u0LJ2e6W4r5t6y7u8i9o0p1a'
    await store.sessions.createSession(sessionRecord({ idHash: sha256(cookie) }))
    let dump = ''
    for (const table of TABLES) {
      const { rows } = await raw.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM ${table} AS t`,
      )
      dump += rows.map((r) => r.row).join('\n')
    }
    for (const secret of [code, ...tokens, cookie]) {
      expect(dump).not.toContain(secret)
      expect(dump).toContain(sha256(secret))
    }
  })

  it('redeems a code with its family, and rotates a token, in one statement each', async () => {
    const store = await open()
    await store.codes.saveCode(codeRecord())
    await store.ping()
    // Every statement of the store's connections, each a round trip: BEGIN and COMMIT included.
    const queries = vi.spyOn(pg.Client.prototype, 'query')
    const issue = { family: refreshFamily(), tokenHash: sha256('rt-1') }
    expect(await store.codes.redeemCode('acme', sha256('code-1'), t0, issue)).toBe(true)
    expect(queries).toHaveBeenCalledTimes(1)
    const steps: [RotateResult['status'], () => Promise<RotateResult>][] = [
      [
        'rotated',
        () =>
          store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('rt-2'), t0 + 1),
      ],
      ['rotated', () => rotateForClient(store, 'web', sha256('rt-2'), sha256('rt-3'), t0 + 2)],
      [
        'not_found',
        () => rotateForClient(store, 'other-client', sha256('rt-3'), sha256('rt-4'), t0 + 3),
      ],
      ['reused', () => rotateForClient(store, 'web', sha256('rt-1'), sha256('rt-4'), t0 + 3)],
      [
        'inactive',
        () =>
          store.refreshTokens.rotateRefreshToken('acme', sha256('rt-3'), sha256('rt-4'), t0 + 4),
      ],
    ]
    for (const [status, rotate] of steps) {
      queries.mockClear()
      expect((await rotate()).status).toBe(status)
      expect(queries).toHaveBeenCalledTimes(1)
    }
  })

  it('survives the server dropping its idle connections, and reconnects', async () => {
    const errors: Error[] = []
    const store = await open(db.url, { onIdleError: (error) => errors.push(error) })
    await Promise.all([store.ping(), store.ping(), store.ping()])
    const { rows } = await raw.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'tessera'`,
    )
    expect(rows[0]?.n).toBeGreaterThan(0)
    await expect.poll(() => errors.length).toBe(rows[0]?.n)
    await expect(store.ping()).resolves.toBeUndefined()
    expect(await store.keys.listKeys('acme')).toEqual([])
  })

  /** Runs `use` with the URL of the file's database through a proxy that it can cut. */
  async function throughProxy(use: (proxy: TcpProxy, url: URL) => Promise<void>): Promise<void> {
    const proxy = await startTcpProxy({
      host: '127.0.0.1',
      port: Number(new URL(db.url).port || 5432),
    })
    try {
      const url = new URL(db.url)
      url.host = `127.0.0.1:${proxy.port}`
      await use(proxy, url)
    } finally {
      await proxy.close()
    }
  }

  it('answers ERR_STORE_UNAVAILABLE while the server is unreachable, then recovers', async () => {
    await throughProxy(async (proxy, url) => {
      url.password = 'hunter2-s3cr3t'
      const store = await open(url.toString(), { onIdleError: () => undefined })
      await startFamily(store, refreshFamily(), sha256('rt-1'))
      const rotate = () =>
        store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('rt-2'), t0 + 1)
      await proxy.cut()
      const error = await failure(rotate())
      expect(error.code).toBe('ERR_STORE_UNAVAILABLE')
      expect(error.message).toMatch(/^cannot reach the PostgreSQL database/)
      expect(error.message).not.toContain('hunter2')
      await expect(store.ping()).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' })
      await proxy.restore()
      // Nothing was changed by the failed call: the token rotates once the server is back.
      expect((await rotate()).status).toBe('rotated')
    })
  })

  it('answers ERR_STORE_UNAVAILABLE for parsedConfig while the server is unreachable', async () => {
    await throughProxy(async (proxy, url) => {
      const store = await open(url.toString(), { onIdleError: () => undefined })
      const entries = [{ key: sha256('tenant-file'), value: 'sealed' }]
      await proxy.cut()
      for (const use of [
        () => store.parsedConfig.add(entries, t0),
        () => store.parsedConfig.list(),
        () => store.parsedConfig.prune(new Set(), t0),
      ]) {
        expect((await failure(use())).code).toBe('ERR_STORE_UNAVAILABLE')
      }
      await proxy.restore()
      expect(await store.parsedConfig.add(entries, t0)).toBe(1)
      expect(await store.parsedConfig.list()).toEqual(entries)
    })
  })

  it('refuses bad options with a TypeError naming the option', async () => {
    await expect(openPostgresStore(db.url, { maxConnections: 0 })).rejects.toThrow(/maxConnections/)
    await expect(openPostgresStore(db.url, { connectTimeoutMs: -1 })).rejects.toThrow(
      /connectTimeoutMs/,
    )
  })
})

describe('openPostgresStore: a database it cannot open', () => {
  const password = 'hunter2-s3cr3t'

  function expectSafe(error: StoreError): void {
    expect(error.message).not.toContain(password)
    expect(String(error.cause)).not.toContain(password)
    expect(JSON.stringify(error)).not.toContain(password)
  }

  it('names a database that does not exist, and no credential', async () => {
    const url = new URL(db.url)
    url.username = 'postgres'
    url.password = password
    url.pathname = '/tessera_no_such_database'
    const error = await failure(openPostgresStore(url.toString()))
    expect(error.code).toBe('ERR_STORE_OPEN')
    expect(error.message).toMatch(/"tessera_no_such_database".*does not exist/)
    expectSafe(error)
  })

  it('says the login was refused, naming neither the user nor the password', async () => {
    const url = new URL(db.url)
    url.username = 'tessera_no_such_role'
    url.password = password
    const error = await failure(openPostgresStore(url.toString()))
    expect(error.code).toBe('ERR_STORE_OPEN')
    expect(error.message).toMatch(/authentication failed/)
    expect(error.message).not.toContain('tessera_no_such_role')
    expectSafe(error)
  })

  it('says the connection was refused on a port nothing listens on', async () => {
    const error = await failure(
      openPostgresStore(`postgres://tessera:${password}@127.0.0.1:1/tessera`),
    )
    expect(error.code).toBe('ERR_STORE_OPEN')
    expect(error.message).toBe(
      'cannot open the PostgreSQL database "tessera" on 127.0.0.1:1: connection refused',
    )
    expectSafe(error)
  })

  it('gives up after connectTimeoutMs on a server that never answers', async () => {
    const sockets: Socket[] = []
    const server: Server = createServer((socket) => sockets.push(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      const started = Date.now()
      const error = await failure(
        openPostgresStore(`postgres://tessera:${password}@127.0.0.1:${port}/tessera`, {
          connectTimeoutMs: 200,
        }),
      )
      expect(error.code).toBe('ERR_STORE_OPEN')
      expect(error.message).toMatch(/timed out/)
      expect(Date.now() - started).toBeLessThan(5_000)
      expectSafe(error)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('says the migration failed on a database whose tables it did not make', async () => {
    const database = await freshDatabase()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    await client.query('CREATE TABLE keys (id INTEGER)')
    await client.end()
    const url = new URL(database.url)
    url.password = password
    const error = await failure(openPostgresStore(url.toString()))
    expect(error.code).toBe('ERR_STORE_OPEN')
    expect(error.message).toBe(
      `cannot open the PostgreSQL database "${database.name}" on ${url.hostname || 'localhost'}:${url.port || '5432'}: ` +
        'migration failed (SQLSTATE 42P07)',
    )
    expectSafe(error)
  })

  it('refuses a URL that does not parse without echoing it', async () => {
    const error = await failure(openPostgresStore(`postgres://u:${password}@[bad/tessera`))
    expect(error.code).toBe('ERR_STORE_URL')
    expectSafe(error)
  })
})

describe('openStore with a PostgreSQL URL', () => {
  beforeEach(emptyTables)

  it.each(['postgres:', 'postgresql:'])('opens a %s// URL', async (scheme) => {
    const url = new URL(db.url)
    const store = await openStore(`${scheme}${db.url.slice(url.protocol.length)}`)
    opened.push(store)
    await store.ping()
    expect(await store.keys.insertKeyIfAbsent(storedKey())).toBe(true)
    expect(await count('keys')).toBe(1)
  })

  it('refuses a bad maxConnections with the TypeError of openPostgresStore', async () => {
    await expect(openStore(db.url, { maxConnections: 0 })).rejects.toThrow(
      new TypeError('openPostgresStore: options.maxConnections must be a positive integer'),
    )
  })

  /** Connections of the store pools on `database`: all of them, and those waiting on a lock. */
  async function poolConnections(
    database: TestDatabase,
  ): Promise<{ total: number; waiting: number }> {
    const { rows } = await raw.query<{ total: number; waiting: number }>(
      `SELECT count(*)::int AS total,
         (count(*) FILTER (WHERE wait_event_type = 'Lock'))::int AS waiting
       FROM pg_stat_activity WHERE datname = $1 AND application_name = 'tessera'`,
      [database.name],
    )
    const [row] = rows
    if (row === undefined) throw new Error('pg_stat_activity answered no row')
    return row
  }

  /**
   * Runs 20 reads at once on a store of its own database, opened with `options`, while another
   * connection holds a lock on the table they read: each read keeps its pooled connection until
   * the lock goes, so the pool grows to its limit and no further, whatever the timing. Answers
   * how many connections waited together and the most seen at any sample, until every read ended.
   */
  async function twentyHeldReads(
    options: OpenStoreOptions | undefined,
  ): Promise<{ waiting: number; most: number }> {
    const database = await freshDatabase()
    const store = await openStore(database.url, options)
    opened.push(store)
    const holder = new pg.Client({ connectionString: database.url })
    await holder.connect()
    let most = 0
    const sample = async (): Promise<{ total: number; waiting: number }> => {
      const seen = await poolConnections(database)
      most = Math.max(most, seen.total)
      return seen
    }
    try {
      await holder.query('BEGIN')
      await holder.query('LOCK TABLE keys IN ACCESS EXCLUSIVE MODE')
      let ended = 0
      const reads = Array.from({ length: 20 }, () =>
        store.keys.listKeys('acme').finally(() => {
          ended++
        }),
      )
      // Awaited below; until then, a failure must not count as unhandled.
      for (const read of reads) read.catch(() => undefined)
      const limit = options?.maxConnections ?? 10
      // Every read asked the pool for a connection before the first reached the server, so once
      // `limit` of them wait on the lock, the pool has opened all it ever will for them.
      await expect.poll(async () => (await sample()).waiting, { timeout: 10_000 }).toBe(limit)
      const { waiting } = await sample()
      expect(ended).toBe(0)
      await holder.query('COMMIT')
      while (ended < reads.length) await sample()
      expect(await Promise.all(reads)).toEqual(Array.from({ length: 20 }, () => []))
      // Idle connections stay pooled for 30 s: what is left is every connection the pool opened.
      await sample()
      return { waiting, most }
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined)
      await holder.end()
    }
  }

  it('holds at most maxConnections connections of the pool at once', async () => {
    expect(await twentyHeldReads({ maxConnections: 2 })).toEqual({ waiting: 2, most: 2 })
  })

  it('holds up to 10 connections by default', async () => {
    expect(await twentyHeldReads(undefined)).toEqual({ waiting: 10, most: 10 })
  })
})

describe('openPostgresStore: another replica’s transaction in flight', () => {
  beforeEach(emptyTables)

  it('makes a rotation wait for a revocation in flight, then answer inactive', async () => {
    const store = await open()
    await startFamily(store, refreshFamily(), sha256('rt-1'))
    for (const rotate of [
      () => store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('rt-2'), t0 + 2),
      () => rotateForClient(store, 'web', sha256('rt-1'), sha256('rt-2'), t0 + 2),
    ]) {
      await raw.query('UPDATE refresh_families SET revoked_at = NULL')
      // Another replica's revocation, holding the family's row until it commits. Without the
      // lock on the family the rotation would have read it before the revocation, and rotated.
      expect(
        await afterCommitOf([['UPDATE refresh_families SET revoked_at = $1', [t0 + 1]]], rotate),
      ).toStrictEqual({ status: 'inactive', family: { ...refreshFamily(), revokedAt: t0 + 1 } })
      expect(await count('refresh_tokens')).toBe(1)
      expect(await count('refresh_tokens WHERE spent_at IS NULL')).toBe(1)
    }
  })

  it('makes a rotation wait for a rotation of the same token in flight, then answer reused', async () => {
    const store = await open()
    for (const [i, rotate] of [
      (next: string) =>
        store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), next, t0 + 2),
      (next: string) => rotateForClient(store, 'web', sha256('rt-1'), next, t0 + 2),
    ].entries()) {
      await emptyTables()
      await startFamily(store, refreshFamily(), sha256('rt-1'))
      // Another replica's rotation: it has spent the token and added the next one. The waiting
      // rotation's statement began before that commit, so only the re-read of the locked row
      // shows it the token as spent.
      const result = await afterCommitOf(
        [
          [
            'UPDATE refresh_tokens SET spent_at = $1 WHERE token_hash = $2',
            [t0 + 1, sha256('rt-1')],
          ],
          [
            `INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at)
             VALUES ('acme', $1, 'family-1', $2)`,
            [sha256('rt-2'), t0 + 1],
          ],
        ],
        () => rotate(sha256(`late-${i}`)),
      )
      expect(result).toStrictEqual({
        status: 'reused',
        family: { ...refreshFamily(), revokedAt: t0 + 2 },
      })
      expect(await count('refresh_families WHERE revoked_at = $1', [t0 + 2])).toBe(1)
      expect(await count('refresh_tokens')).toBe(2)
    }
  })

  it('keeps the revocation of a reuse in flight when a later reuse waited for it', async () => {
    const store = await open()
    await startFamily(store, refreshFamily(), sha256('rt-1'))
    await store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('rt-2'), t0 + 1)
    // Another replica's reuse of the spent token: it holds the token's row and has revoked the
    // family. The waiting reuse finds the family revoked on its re-read, and leaves it so.
    const result = await afterCommitOf(
      [
        ['SELECT 1 FROM refresh_tokens WHERE token_hash = $1 FOR NO KEY UPDATE', [sha256('rt-1')]],
        ['UPDATE refresh_families SET revoked_at = $1', [t0 + 2]],
      ],
      () => rotateForClient(store, 'web', sha256('rt-1'), sha256('rt-3'), t0 + 3),
    )
    expect(result).toStrictEqual({
      status: 'reused',
      family: { ...refreshFamily(), revokedAt: t0 + 2 },
    })
    expect(await count('refresh_families WHERE revoked_at = $1', [t0 + 2])).toBe(1)
    expect(await count('refresh_tokens')).toBe(2)
  })

  it('makes a logout wait for a redemption in flight, then revoke the family it created', async () => {
    const store = await open()
    await store.sessions.createSession(sessionRecord())
    await store.codes.saveCode(codeRecord({ sid: 'sid-1', authTime: t0 }))
    // Another replica's redemption (REDEEM_CODE): the code consumed and the family inserted,
    // holding the code's row until it commits. The logout's snapshots before that commit do not
    // show the family; only a statement that starts after its wait for the code can.
    const ended = await afterCommitOf(
      [
        [
          'UPDATE authorization_codes SET consumed_at = $1 WHERE code_hash = $2',
          [t0 + 1, sha256('code-1')],
        ],
        [
          `INSERT INTO refresh_families (tenant, family_id, client_id, sub, scope, claims,
             code_hash, sid, auth_time, created_at, expires_at)
           VALUES ('acme', 'family-1', 'web', 'alice', 'openid', '{}', $1, 'sid-1', $2, $2, $3)`,
          [sha256('code-1'), t0, t0 + 60_000],
        ],
      ],
      () => store.sessions.endSession('acme', 'sid-1', t0 + 2),
    )
    expect(ended).toBe(true)
    expect((await store.codes.findCode('acme', sha256('code-1')))?.consumedAt).toBe(t0 + 1)
    expect((await store.refreshTokens.findFamily('acme', 'family-1'))?.revokedAt).toBe(t0 + 2)
  })

  it('makes a redemption wait for a logout in flight, then fail', async () => {
    const store = await open()
    await store.sessions.createSession(sessionRecord())
    await store.codes.saveCode(codeRecord({ sid: 'sid-1', authTime: t0 }))
    const redeemed = await afterCommitOf(
      [
        ['UPDATE sessions SET ended_at = $1 WHERE sid = $2', [t0 + 1, 'sid-1']],
        ['UPDATE authorization_codes SET consumed_at = $1 WHERE sid = $2', [t0 + 1, 'sid-1']],
      ],
      () =>
        store.codes.redeemCode('acme', sha256('code-1'), t0 + 2, {
          family: refreshFamily({ sid: 'sid-1', authTime: t0 }),
          tokenHash: sha256('rt-1'),
        }),
    )
    expect(redeemed).toBe(false)
    expect(await count('refresh_families')).toBe(0)
    expect(await count('refresh_tokens')).toBe(0)
  })
})

describe('openPostgresStore: marks', () => {
  beforeEach(emptyTables)

  it('stores a mark id as its UTF-8 bytes, NUL included', async () => {
    const store = await open()
    expect(await store.marks.mark('acme', 'jti', 'a\u0000\u00e9', t0 + 1, t0)).toBe(true)
    const { rows } = await raw.query<{ id: string }>("SELECT encode(id, 'hex') AS id FROM marks")
    expect(rows).toEqual([{ id: Buffer.from('a\u0000\u00e9').toString('hex') }])
  })
})

describe('createTestDatabase (@tessera/test-support)', () => {
  it('creates an empty database of its own and drops it, idempotently', async () => {
    const database = await createTestDatabase()
    expect(database.name).toMatch(/^tessera_test_[0-9a-f]{16}$/)
    expect(new URL(database.url).pathname).toBe(`/${database.name}`)
    const exists = async (): Promise<number> =>
      count('pg_database WHERE datname = $1', [database.name])
    expect(await exists()).toBe(1)
    const client = new pg.Client({ connectionString: database.url })
    client.on('error', () => undefined)
    await client.connect()
    // A connection left open does not stop the drop.
    await database.drop()
    await database.drop()
    await client.end().catch(() => undefined)
    expect(await exists()).toBe(0)
  })
})
