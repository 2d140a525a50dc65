import { spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATIONS, migrate } from './internal/migrations.js'
import { createCheckpointer, openDatabase } from './internal/sqlite-database.js'
import { openSqliteStore } from './sqlite.js'
import type { Store } from './store.js'
import {
  failOne,
  failuresOf,
  codeRecord,
  runReplicaContract,
  runStoreContract,
  refreshFamily,
  reserveOne,
  sha256,
  startFamily,
  storedKey,
  t0,
} from './test-utils/contract/index.js'

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

runStoreContract('sqlite (file)', () => openSqliteStore(freshFile()))
runStoreContract('sqlite (:memory:)', () => openSqliteStore(':memory:'))

runReplicaContract('sqlite', {
  async fresh() {
    // Made and migrated here, so that the replicas never race to create the file.
    const file = freshFile()
    await (await openSqliteStore(file)).close()
    return `sqlite:${file}`
  },
  open: (url) => open(url.slice('sqlite:'.length)),
  count(url, from) {
    const db = raw(url.slice('sqlite:'.length))
    try {
      const row = db.prepare(`SELECT count(*) AS n FROM ${from}`).get() as { n: number }
      return Promise.resolve(row.n)
    } finally {
      db.close()
    }
  },
})

describe('openSqliteStore', () => {
  it('keeps data across close and reopen', async () => {
    const file = freshFile()
    const first = await open(file)
    await first.keys.insertKeyIfAbsent(storedKey())
    await failOne(first, 'acme:alice', { limit: 1, now: 1_000, windowMs: 60_000 })
    await first.close()

    const second = await open(file)
    expect(await second.keys.listKeys('acme')).toEqual([storedKey()])
    expect(await reserveOne(second, 'acme:alice', { limit: 1, now: 2_000 })).toEqual({
      status: 'blocked',
      key: 'acme:alice',
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

  it('migrates a version 7 file in place, keeping its codes and families', async () => {
    const file = freshFile()
    const seven = new Database(file)
    migrate(seven, MIGRATIONS.slice(0, 7))
    const code = codeRecord()
    delete code.codeChallenge
    seven
      .prepare(
        `INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri, scope, sub,
           claims, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        code.tenant,
        code.codeHash,
        code.clientId,
        code.redirectUri,
        code.scope,
        code.sub,
        JSON.stringify(code.claims),
        code.createdAt,
        code.expiresAt,
      )
    seven.close()

    const store = await open(file)
    expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual(code)
    const family = refreshFamily({ sid: 'sid-1', authTime: t0 })
    expect(
      await store.codes.redeemCode('acme', code.codeHash, t0, { family, tokenHash: sha256('rt') }),
    ).toBe(true)
    expect(await store.refreshTokens.findFamily('acme', family.familyId)).toStrictEqual(family)
    expect(await store.sessions.endSession('acme', 'sid-1', t0 + 1)).toBe(false)
    expect((await store.refreshTokens.findFamily('acme', family.familyId))?.revokedAt).toBe(t0 + 1)
    const db = raw(file)
    expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({
      v: MIGRATIONS.length,
    })
    db.close()
  })

  it('creates the missing directories of the path', async () => {
    const store = await open(join(dir, 'nested', 'deeper', 'tessera.db'))
    await expect(store.ping()).resolves.toBeUndefined()
  })

  it('runs in WAL mode with a busy timeout and foreign keys on', () => {
    const db = openDatabase(freshFile())
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(db.pragma('synchronous', { simple: true })).toBe(1)
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

const BUILT = fileURLToPath(new URL('../dist/index.js', import.meta.url))

/**
 * The umask tests run the built package in a child process (turbo builds before it tests):
 * rebuild after changing src/ before running this file on its own.
 */
function checkBuild(): void {
  if (!existsSync(BUILT)) throw new Error('build @tessera/store first (tsc -b)')
}

describe('openSqliteStore: marks and secrets', () => {
  it('keeps marks and secrets across close and reopen', async () => {
    const file = freshFile()
    const first = await openSqliteStore(file)
    await first.marks.mark('acme', 'jti', 'j-1', t0 + 60_000, t0)
    await first.secrets.getOrCreateSecret('login-form-key', 'first')
    await first.close()
    const second = await open(file)
    expect(await second.marks.isMarked('acme', 'jti', 'j-1', t0)).toBe(true)
    expect(await second.marks.mark('acme', 'jti', 'j-1', t0 + 60_000, t0)).toBe(false)
    expect(await second.secrets.getOrCreateSecret('login-form-key', 'second')).toBe('first')
  })
})

const UMASK_CHILD = fileURLToPath(new URL('./test-utils/umask-child.mjs', import.meta.url))

/** The permission bits of `path`, as an octal string such as `600`. */
function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8)
}

/** Runs umask-child.mjs on `file`, calls `inspect` while its store is open, then lets it close. */
async function withStoreOpenUnderUmask000(
  file: string,
  control: string,
  inspect: () => void,
): Promise<void> {
  // sh sets the umask, then becomes node: the umask is the process's from its first instruction.
  const child = spawn(
    '/bin/sh',
    ['-c', 'umask 000 && exec "$@"', 'sh', process.execPath, UMASK_CHILD, file, control],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  let out = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      if (out.includes('ready\n')) resolve()
    })
    void exited.then((status) => reject(new Error(`the child exited with ${String(status)}`)))
  })
  try {
    inspect()
  } finally {
    child.stdin.write('go\n')
    expect(await exited).toBe(0)
  }
}

describe('openSqliteStore: file modes', () => {
  beforeAll(checkBuild)

  it('creates its directories 0700 and the database, -wal and -shm 0600 under umask 000', async () => {
    const top = join(dir, 'private')
    const file = join(top, 'data', 'tessera.db')
    const control = join(dir, 'umask-control')
    await withStoreOpenUnderUmask000(file, control, () => {
      expect(modeOf(control)).toBe('666')
      expect(modeOf(top)).toBe('700')
      expect(modeOf(join(top, 'data'))).toBe('700')
      expect(modeOf(file)).toBe('600')
      expect(modeOf(`${file}-wal`)).toBe('600')
      expect(modeOf(`${file}-shm`)).toBe('600')
    })
    // The store wrote through them: the modes are not those of empty files SQLite never used.
    const db = raw(file)
    expect(db.prepare('SELECT count(*) AS n FROM secrets').get()).toEqual({ n: 1 })
    db.close()
  })

  it('leaves the mode of a directory and a database file that exist already', async () => {
    const existing = join(dir, 'shared')
    await mkdir(existing, { mode: 0o755 })
    await chmod(existing, 0o755)
    const file = join(existing, 'tessera.db')
    await writeFile(file, '')
    await chmod(file, 0o640)
    await withStoreOpenUnderUmask000(file, join(dir, 'umask-control-2'), () => {
      expect(modeOf(existing)).toBe('755')
      expect(modeOf(file)).toBe('640')
    })
  })
})

describe('openSqliteStore: the grant tables', () => {
  it('keeps codes, families and tokens across close and reopen', async () => {
    const file = freshFile()
    const first = await open(file)
    await first.codes.saveCode(codeRecord())
    await first.codes.redeemCode('acme', sha256('code-1'), t0, {
      family: refreshFamily(),
      tokenHash: sha256('rt-1'),
    })
    await first.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('rt-2'), t0 + 1)
    await first.close()

    const second = await open(file)
    expect(await second.codes.findCode('acme', sha256('code-1'))).toStrictEqual({
      ...codeRecord(),
      consumedAt: t0,
    })
    expect(
      (await second.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('x'), t0 + 2))
        .status,
    ).toBe('reused')
    expect(await second.refreshTokens.findRefreshToken('acme', sha256('rt-2'))).toStrictEqual({
      token: { tokenHash: sha256('rt-2'), familyId: 'family-1', createdAt: t0 + 1 },
      family: { ...refreshFamily(), revokedAt: t0 + 2 },
    })
  })

  it('stores an absent optional field as NULL', async () => {
    const file = freshFile()
    const store = await open(file)
    await store.codes.saveCode(codeRecord({ codeChallenge: undefined }))
    await store.codes.redeemCode('acme', sha256('code-1'), t0, {
      family: refreshFamily({ codeHash: undefined }),
      tokenHash: sha256('rt-1'),
    })
    const db = raw(file)
    expect(
      db.prepare('SELECT code_challenge, typeof(claims) AS claims FROM authorization_codes').get(),
    ).toEqual({ code_challenge: null, claims: 'text' })
    expect(db.prepare('SELECT code_hash, revoked_at FROM refresh_families').get()).toEqual({
      code_hash: null,
      revoked_at: null,
    })
    expect(db.prepare('SELECT spent_at FROM refresh_tokens').get()).toEqual({ spent_at: null })
    db.close()
  })

  it('drops login_transactions from a version 13 file, keeping its other rows', async () => {
    const file = freshFile()
    const thirteen = new Database(file)
    migrate(thirteen, MIGRATIONS.slice(0, 13))
    const code = codeRecord()
    thirteen
      .prepare(
        `INSERT INTO authorization_codes (tenant, code_hash, client_id, redirect_uri,
           code_challenge, scope, sub, claims, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
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
      )
    const insertLogin = thirteen.prepare(
      `INSERT INTO login_transactions (tenant, id, client_id, redirect_uri, scope, binding_hash,
         created_at, expires_at) VALUES ('acme', ?, 'web', 'https://app.example/cb', '', 'b', ?, ?)`,
    )
    insertLogin.run('old', t0, t0 + 600_000)
    insertLogin.run('live', t0, t0 + 600_001)
    thirteen.close()

    const store = await open(file)
    const db = raw(file)
    expect(
      db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'login_transactions%'").all(),
    ).toEqual([])
    expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({
      v: MIGRATIONS.length,
    })
    db.close()
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

  it('deletes the tokens of a family deleted under them (ON DELETE CASCADE)', async () => {
    const file = freshFile()
    const store = await open(file)
    await startFamily(store, refreshFamily(), sha256('rt-1'))
    const db = new Database(file)
    db.pragma('foreign_keys = ON')
    db.prepare("DELETE FROM refresh_families WHERE family_id = 'family-1'").run()
    expect(db.prepare('SELECT count(*) AS n FROM refresh_tokens').get()).toEqual({ n: 0 })
    db.close()
  })

  it('rejects a stored code whose claims are not a JSON object', async () => {
    const file = freshFile()
    const store = await open(file)
    await store.codes.saveCode(codeRecord())
    const db = new Database(file)
    // The CHECK on the column already refuses this; switch it off to plant a foreign row.
    db.pragma('ignore_check_constraints = ON')
    db.prepare("UPDATE authorization_codes SET claims = '[1, 2]'").run()
    db.close()
    await expect(store.codes.findCode('acme', sha256('code-1'))).rejects.toMatchObject({
      name: 'StoreError',
      code: 'ERR_STORE_ROW_INVALID',
    })
  })
})

describe('createCheckpointer', () => {
  /** Whether `marker` has reached the database file itself, as opposed to only its WAL. */
  const inMainFile = (file: string, marker: string): boolean =>
    readFileSync(file).includes(Buffer.from(marker))

  async function eventually(check: () => boolean, ms = 5_000): Promise<boolean> {
    const until = Date.now() + ms
    while (Date.now() < until) {
      if (check()) return true
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return check()
  }

  it('starts a thread after a few hundred writes that copies the WAL back, and stops it on close', async () => {
    const file = freshFile()
    const db = openDatabase(file)
    const checkpointer = createCheckpointer(db, file)
    try {
      db.exec('CREATE TABLE t (x TEXT)')
      const insert = db.prepare<[string]>('INSERT INTO t VALUES (?)')
      insert.run('written-before-the-thread')
      await new Promise((resolve) => setTimeout(resolve, 200))
      // 1000 pages of WAL are far away: the committing connection has not checkpointed.
      expect(inMainFile(file, 'written-before-the-thread')).toBe(false)
      for (let i = 0; i < 300; i++) checkpointer.wrote()
      expect(
        await eventually(() => db.pragma('wal_autocheckpoint', { simple: true }) === 10_000),
      ).toBe(true)
      insert.run('written-with-the-thread')
      expect(await eventually(() => inMainFile(file, 'written-with-the-thread'))).toBe(true)
    } finally {
      await checkpointer.close()
      db.close()
    }
    // The last connection to close removed the WAL: the thread's connection was closed first.
    expect(existsSync(`${file}-wal`)).toBe(false)
  })

  it('does nothing for an in-memory database', async () => {
    const db = openDatabase(':memory:')
    const checkpointer = createCheckpointer(db, ':memory:')
    for (let i = 0; i < 300; i++) checkpointer.wrote()
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000)
    await checkpointer.close()
    db.close()
  })

  it('keeps a store that wrote enough to start one closing cleanly, and its data', async () => {
    const file = freshFile()
    const store = await openSqliteStore(file)
    for (let i = 0; i < 300; i++) {
      await failOne(store, `acme:user-${i}`, { limit: 1, now: t0, windowMs: 60_000 })
    }
    await store.close()
    await store.close()
    const reopened = await open(file)
    expect(await failuresOf(reopened, 'acme:user-299', t0 + 1)).toBe(1)
  })
})

describe('openSqliteStore: rotations asked in one turn are committed together', () => {
  it('undoes a rotation that fails alone, and lets later ones see the earlier ones', async () => {
    const file = freshFile()
    const store = await open(file)
    const first = sha256('rt-1')
    const second = sha256('rt-2')
    const third = sha256('rt-3')
    const otherFamily = sha256('rt-of-family-2')
    await startFamily(store, refreshFamily(), first)
    await startFamily(store, refreshFamily({ familyId: 'family-2' }), otherFamily)
    const rt = store.refreshTokens
    const [a, b, c] = await Promise.allSettled([
      rt.rotateRefreshToken('acme', first, second, t0 + 1),
      // The new hash is taken by now: this one fails after spending its token, and is undone.
      rt.rotateRefreshToken('acme', otherFamily, second, t0 + 2),
      // Sees the token the first one made.
      rt.rotateRefreshToken('acme', second, third, t0 + 3),
    ])
    expect(a).toMatchObject({ status: 'fulfilled', value: { status: 'rotated' } })
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'ERR_STORE_CONFLICT' } })
    expect(c).toMatchObject({ status: 'fulfilled', value: { status: 'rotated' } })
    expect((await rt.findRefreshToken('acme', otherFamily))?.token).not.toHaveProperty('spentAt')
    expect((await rt.findRefreshToken('acme', second))?.token.spentAt).toBe(t0 + 3)
    expect((await rt.findRefreshToken('acme', third))?.family.familyId).toBe('family-1')
  })

  it('answers a rotation only once another connection can see it committed', async () => {
    const file = freshFile()
    const store = await open(file)
    const chain = Array.from({ length: 6 }, (_, i) => sha256(`chain-${i}`))
    await startFamily(store, refreshFamily(), chain[0] ?? '')
    const reader = raw(file)
    const spentAt = reader.prepare<[string], { spent_at: number | null }>(
      'SELECT spent_at FROM refresh_tokens WHERE token_hash = ?',
    )
    try {
      // Asked at once, the five run in order: each spends the token the one before made.
      const answered = await Promise.all(
        chain
          .slice(0, 5)
          .map((token, i) =>
            store.refreshTokens
              .rotateRefreshToken('acme', token, chain[i + 1] ?? '', t0)
              .then((result) => ({ result, seen: spentAt.get(token) })),
          ),
      )
      for (const { result, seen } of answered) {
        expect(result.status).toBe('rotated')
        expect(seen?.spent_at).toBe(t0)
      }
    } finally {
      reader.close()
    }
  })

  it('runs throttle reservations and settlements asked in one turn in order, with rotations', async () => {
    const file = freshFile()
    const store = await open(file)
    await startFamily(store, refreshFamily(), sha256('rt-1'))
    const reader = raw(file)
    const heldOn = reader.prepare<[string], { n: number }>(
      'SELECT count(*) AS n FROM throttle_holds WHERE "key" = ?',
    )
    const failures = reader.prepare<[string], { count: number }>(
      'SELECT count FROM throttle WHERE "key" = ?',
    )
    const terms = { now: t0, leaseMs: 60_000 }
    const keys = [
      { key: 'user:acme:alice', limit: 3 },
      { key: 'addr:192.0.2.1', limit: 10 },
    ]
    try {
      const reserve = () =>
        store.throttle
          .reserveAttempts(keys, terms)
          .then((result) => ({ result, seen: heldOn.get('user:acme:alice')?.n }))
      const [a, b, rotation, c, d] = await Promise.all([
        reserve(),
        reserve(),
        store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('rt-2'), t0),
        reserve(),
        reserve(),
      ])
      // Each saw those before it; each answer was committed, for another connection to read.
      expect([a, b, c].map(({ result }) => result.status)).toEqual([
        'granted',
        'granted',
        'granted',
      ])
      expect(d.result).toEqual({ status: 'busy', key: 'user:acme:alice' })
      for (const { seen } of [a, b, c, d]) expect(seen).toBe(3)
      expect(rotation.status).toBe('rotated')
      if (a.result.status !== 'granted') throw new Error('not granted')
      // A settlement and the reservation after it, in one turn: the second sees the first.
      const [, again] = await Promise.all([
        store.throttle.settleAttempts(
          { hold: a.result.hold, fail: ['user:acme:alice', 'addr:192.0.2.1'], clear: [] },
          { now: t0, windowMs: 60_000 },
        ),
        store.throttle.reserveAttempts(keys, terms),
      ])
      expect(again.status).toBe('busy')
      expect(failures.get('user:acme:alice')?.count).toBe(1)
      expect(heldOn.get('addr:192.0.2.1')?.n).toBe(2)
    } finally {
      reader.close()
    }
  })

  it('answers the rotations still queued when the store is closed', async () => {
    const file = freshFile()
    const store = await openSqliteStore(file)
    await startFamily(store, refreshFamily(), sha256('rt-1'))
    const rotation = store.refreshTokens.rotateRefreshToken(
      'acme',
      sha256('rt-1'),
      sha256('rt-2'),
      t0 + 1,
    )
    await store.close()
    expect(await rotation).toMatchObject({ status: 'rotated' })
    await expect(
      store.refreshTokens.rotateRefreshToken('acme', sha256('rt-2'), sha256('rt-3'), t0 + 2),
    ).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' })
    const reopened = await open(file)
    expect((await reopened.refreshTokens.findRefreshToken('acme', sha256('rt-2')))?.token).toEqual({
      tokenHash: sha256('rt-2'),
      familyId: 'family-1',
      createdAt: t0 + 1,
    })
  })
})
