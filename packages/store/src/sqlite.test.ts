import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATIONS } from './internal/migrations.js'
import { openDatabase } from './internal/sqlite-database.js'
import { openSqliteStore } from './sqlite.js'
import type { Store } from './store.js'
import { describeStoreContract, storedKey } from './test-utils/contract.js'

let dir: string
let files = 0
const opened: Store[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-store-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

function freshFile(): string {
  return join(dir, `store-${++files}.db`)
}

async function open(file: string): Promise<Store> {
  const store = await openSqliteStore(file)
  opened.push(store)
  return store
}

function raw(file: string): Database.Database {
  return new Database(file, { readonly: true })
}

describeStoreContract('sqlite (file)', () => openSqliteStore(freshFile()))
describeStoreContract('sqlite (:memory:)', () => openSqliteStore(':memory:'))

describe('openSqliteStore', () => {
  it('keeps data across close and reopen', async () => {
    const file = freshFile()
    const first = await open(file)
    await first.keys.insertKeyIfAbsent(storedKey())
    await first.throttle.recordFailure('acme:alice', 1_000, 60_000)
    await first.close()

    const second = await open(file)
    expect(await second.keys.listKeys('acme')).toEqual([storedKey()])
    expect(await second.throttle.getFailures('acme:alice', 2_000)).toEqual({
      count: 1,
      resetAt: 61_000,
    })
  })

  it('applies each migration once, however often the file is opened', async () => {
    const file = freshFile()
    await (await open(file)).close()
    const db = raw(file)
    const before = db.prepare('SELECT version, name, applied_at FROM schema_migrations').all()
    db.close()

    await (await open(file)).close()
    await (await open(file)).close()
    const again = raw(file)
    const after = again.prepare('SELECT version, name, applied_at FROM schema_migrations').all()
    again.close()

    expect(after).toEqual(before)
    expect(after).toMatchObject(MIGRATIONS.map(({ version, name }) => ({ version, name })))
  })

  it('creates the missing directories of the path', async () => {
    const store = await open(join(dir, 'nested', 'deeper', 'tessera.db'))
    await expect(store.ping()).resolves.toBeUndefined()
  })

  it('runs in WAL mode with a busy timeout and foreign keys on', () => {
    const db = openDatabase(freshFile())
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(db.pragma('busy_timeout', { simple: true })).toBe(5000)
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    } finally {
      db.close()
    }
  })

  it('leaves the file in WAL mode for every later connection', async () => {
    const file = freshFile()
    await open(file)
    const db = raw(file)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    db.close()
  })

  it('lets two stores on one file, like two processes, see each other’s writes', async () => {
    const file = freshFile()
    const a = await open(file)
    const b = await open(file)
    await a.keys.insertKeyIfAbsent(storedKey())
    expect(await b.keys.listKeys('acme')).toEqual([storedKey()])
    await b.keys.updateKeyState('acme', '2025-03-10', 'retired', 5)
    expect(await a.keys.listKeys('acme')).toMatchObject([{ state: 'retired', retiredAt: 5 }])
    await a.throttle.recordFailure('acme:alice', 0, 60_000)
    expect((await b.throttle.recordFailure('acme:alice', 1, 60_000)).count).toBe(2)
  })

  it('lets exactly one of two stores on one file insert the same (tenant, kid)', async () => {
    const file = freshFile()
    const [a, b] = await Promise.all([open(file), open(file)])
    const results = await Promise.all([
      a.keys.insertKeyIfAbsent(storedKey({ publicJwk: '{"from":"a"}' })),
      b.keys.insertKeyIfAbsent(storedKey({ publicJwk: '{"from":"b"}' })),
    ])
    expect(results.filter(Boolean)).toHaveLength(1)
    const winner = results[0] ? '{"from":"a"}' : '{"from":"b"}'
    expect(await a.keys.listKeys('acme')).toMatchObject([{ publicJwk: winner }])
    expect(await b.keys.listKeys('acme')).toMatchObject([{ publicJwk: winner }])
  })

  it('refuses a file that is not an SQLite database', async () => {
    const file = freshFile()
    await writeFile(file, 'this is not a database, it is a plain text file of some length')
    await expect(openSqliteStore(file)).rejects.toMatchObject({
      name: 'StoreError',
      code: 'ERR_STORE_OPEN',
    })
  })

  it('rejects a stored row of the wrong shape instead of returning it', async () => {
    const file = freshFile()
    const store = await open(file)
    const db = new Database(file)
    db.prepare(
      `INSERT INTO keys (tenant, kid, alg, public_jwk, private_key, created_at, state)
       VALUES ('acme', '2025-03-10', 'HS256', '{}', '{}', 0, 'active')`,
    ).run()
    db.close()
    await expect(store.keys.listKeys('acme')).rejects.toMatchObject({
      name: 'StoreError',
      code: 'ERR_STORE_ROW_INVALID',
    })
  })

  it('throws a StoreError for an empty path', async () => {
    await expect(openSqliteStore('')).rejects.toMatchObject({ code: 'ERR_STORE_URL' })
  })
})
