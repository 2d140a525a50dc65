import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSealer } from '@tessera/keys/envelope'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { postForm } from '../support/http.js'
import { FIXTURES, startIssuer, tempDir, type InProcessIssuer } from '../support/issuer.js'

const SECRET = 'e2e-parse-cache-key-encryption-secret-0123456789'
const OTHER_SECRET = 'e2e-parse-cache-another-encryption-secret-987654'
const TENANTS = 12

const clientId = (i: number): string => `${String(i).padStart(8, '0')}-0000-4000-8000-00000000cafe`
const clientSecret = (i: number, version: number): string => `tenant-${i}-secret-v${version}`

function tenantYaml(i: number, version = 1): string {
  return [
    `name: t${i}`,
    'config:',
    `  hosts: [t${i}.test]`,
    '  providers: [providers/users.mjs]',
    '  clients:',
    `    - client_id: ${clientId(i)}`,
    `      client_secret: ${clientSecret(i, version)}`,
    '      grant_types: [password]',
    '      scopes: [read]',
    '',
  ].join('\n')
}

/** The first log line of `msg`; throws when there is none. */
function logLine(logs: string[], msg: string): Record<string, unknown> {
  const line = logs
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry.msg === msg)
  if (line === undefined) throw new Error(`no "${msg}" line in the logs`)
  return line
}

/** The counts the files source logged for its first load; throws without a cache. */
function cacheCounts(logs: string[]): { hits: number; misses: number; unreadable: number } {
  const line = logLine(logs, 'tenant files read; parse results from the database')
  return {
    hits: line.hits as number,
    misses: line.misses as number,
    unreadable: line.unreadable as number,
  }
}

/** Waits until the issuer has stored what its load missed (a second after it), then closes it. */
async function closeOnceSaved(
  running: InProcessIssuer,
): Promise<{ added: number; pruned: number }> {
  try {
    const line = await eventually(() =>
      logLine(running.logs, 'parse results of tenant files stored'),
    )
    return { added: line.added as number, pruned: line.pruned as number }
  } finally {
    await running.close()
  }
}

describe('parse results of tenant files kept in the database', () => {
  let tmp: ReturnType<typeof tempDir>
  let config: string
  let databaseUrl: string
  let file: string
  beforeEach(() => {
    tmp = tempDir()
    config = join(tmp.dir, 'config')
    mkdirSync(join(config, 'providers'), { recursive: true })
    copyFileSync(
      join(FIXTURES, 'basic', 'providers', 'users.mjs'),
      join(config, 'providers', 'users.mjs'),
    )
    for (let i = 0; i < TENANTS; i++) writeFileSync(join(config, `t${i}.yaml`), tenantYaml(i))
    file = join(tmp.dir, 'tessera.db')
    databaseUrl = `sqlite:${file}`
  })
  afterEach(() => tmp.remove())

  /** An issuer on the folder's files and database; `null` leaves KEY_ENCRYPTION_SECRET unset. */
  const start = (secret: string | null = SECRET) =>
    startIssuer({
      databaseUrl,
      config,
      vars: secret === null ? {} : { KEY_ENCRYPTION_SECRET: secret },
    })

  const password = (url: string, i: number, version: number) =>
    postForm(url, `t${i}.test`, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      client_id: clientId(i),
      client_secret: clientSecret(i, version),
    })

  const rows = (): { key: string; value: string }[] => {
    const db = new Database(file, { readonly: true })
    try {
      return db.prepare('SELECT key, value FROM parsed_config').all() as {
        key: string
        value: string
      }[]
    } finally {
      db.close()
    }
  }

  it('parses every file once, then only the files that changed; sealed, never a secret in clear', async () => {
    const first = await start()
    expect(cacheCounts(first.logs)).toEqual({ hits: 0, misses: TENANTS, unreadable: 0 })
    expect((await password(first.url, 3, 1)).status).toBe(200)
    expect(await closeOnceSaved(first)).toEqual({ added: TENANTS, pruned: 0 })
    const stored = rows()
    expect(stored).toHaveLength(TENANTS)
    for (const row of stored) {
      expect(row.key).toMatch(/^[0-9a-f]{64}$/)
      expect(row.value).toMatch(/^enc:v1:[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/)
    }
    // Not in the rows, nor anywhere in the database's files.
    const bytes = Buffer.concat(
      ['', '-wal'].map((suffix) => {
        try {
          return readFileSync(file + suffix)
        } catch {
          return Buffer.alloc(0)
        }
      }),
    )
    for (let i = 0; i < TENANTS; i++) {
      expect(bytes.includes(clientSecret(i, 1))).toBe(false)
    }

    // A client secret changed in one file: that file alone is parsed, and the new secret holds.
    writeFileSync(join(config, 't3.yaml'), tenantYaml(3, 2))
    const second = await start()
    expect(cacheCounts(second.logs)).toEqual({ hits: TENANTS - 1, misses: 1, unreadable: 0 })
    expect((await password(second.url, 3, 1)).status).toBe(401)
    expect((await password(second.url, 3, 2)).status).toBe(200)
    expect((await password(second.url, 4, 1)).status).toBe(200)
    // The old version's entry is kept for a week (another replica may still serve it).
    expect(await closeOnceSaved(second)).toEqual({ added: 1, pruned: 0 })
    expect(rows()).toHaveLength(TENANTS + 1)

    const third = await start()
    expect(cacheCounts(third.logs)).toEqual({ hits: TENANTS, misses: 0, unreadable: 0 })
    expect(third.issuer.tenants.map((tenant) => tenant.name).sort()).toEqual(
      Array.from({ length: TENANTS }, (_, i) => `t${i}`).sort(),
    )
    expect(await closeOnceSaved(third)).toEqual({ added: 0, pruned: 0 })
  })

  /** A start whose clock is a week and a minute ahead: the entries stored now are a week old. */
  const startAWeekLater = (): Promise<InProcessIssuer> =>
    startIssuer({
      databaseUrl,
      config,
      vars: { KEY_ENCRYPTION_SECRET: SECRET },
      clock: () => Date.now() + 7 * 86_400_000 + 60_000,
    })

  it('deletes the entries of a week ago that the start did not use', async () => {
    await closeOnceSaved(await start())
    writeFileSync(join(config, 't3.yaml'), tenantYaml(3, 2))
    const later = await startAWeekLater()
    expect(cacheCounts(later.logs)).toEqual({ hits: TENANTS - 1, misses: 1, unreadable: 0 })
    expect(await closeOnceSaved(later)).toEqual({ added: 1, pruned: 1 })
    expect(rows()).toHaveLength(TENANTS)
  })

  it('deletes them too on a start where every file hits (nothing to parse)', async () => {
    await closeOnceSaved(await start())
    writeFileSync(join(config, 't3.yaml'), tenantYaml(3, 2))
    expect(await closeOnceSaved(await start())).toEqual({ added: 1, pruned: 0 })
    // Back to the first version: its entry is still stored, so every file hits.
    writeFileSync(join(config, 't3.yaml'), tenantYaml(3))
    const later = await startAWeekLater()
    expect(cacheCounts(later.logs)).toEqual({ hits: TENANTS, misses: 0, unreadable: 0 })
    expect((await password(later.url, 3, 1)).status).toBe(200)
    expect(await closeOnceSaved(later)).toEqual({ added: 0, pruned: 1 })
    expect(rows()).toHaveLength(TENANTS)
  })

  it('parses again, and replaces, an entry that does not open: damaged, or sealed with another secret', async () => {
    await closeOnceSaved(await start())
    const [damaged, moved, third] = rows()
    if (damaged === undefined || moved === undefined || third === undefined) {
      throw new Error('no rows')
    }
    const db = new Database(file)
    try {
      db.prepare('UPDATE parsed_config SET value = ? WHERE key = ?').run(
        `${damaged.value.slice(0, -4)}AAAA`,
        damaged.key,
      )
      // An entry copied onto another key does not open there either.
      db.prepare('UPDATE parsed_config SET value = ? WHERE key = ?').run(moved.value, third.key)
    } finally {
      db.close()
    }
    const after = await start()
    expect(cacheCounts(after.logs)).toEqual({ hits: TENANTS - 2, misses: 2, unreadable: 2 })
    for (let i = 0; i < TENANTS; i++) expect((await password(after.url, i, 1)).status).toBe(200)
    expect(await closeOnceSaved(after)).toEqual({ added: 2, pruned: 0 })
    const again = await start()
    expect(cacheCounts(again.logs)).toEqual({ hits: TENANTS, misses: 0, unreadable: 0 })
    await again.close()

    // KEY_ENCRYPTION_SECRET changed: nothing opens, every file is parsed, the entries replaced.
    const rotated = await start(OTHER_SECRET)
    expect(cacheCounts(rotated.logs)).toEqual({ hits: 0, misses: TENANTS, unreadable: TENANTS })
    expect((await password(rotated.url, 0, 1)).status).toBe(200)
    expect(await closeOnceSaved(rotated)).toEqual({ added: TENANTS, pruned: 0 })
    const back = await start(OTHER_SECRET)
    expect(cacheCounts(back.logs).hits).toBe(TENANTS)
    await back.close()
  })

  it("opens the entries sealed in the cache's first form (v1.<iv>.<ciphertext>.<tag>)", async () => {
    await closeOnceSaved(await start())
    // Each entry sealed again as the first form sealed it: one key for all, the digest as AAD.
    const sealer = createSealer(SECRET, 'parsed-configuration')
    const key = Buffer.from(
      hkdfSync('sha256', SECRET, 'tessera parsed configuration', 'aes-256-gcm v1', 32),
    )
    const firstForm = (json: string, digest: string): string => {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 })
      cipher.setAAD(Buffer.from(digest, 'utf8'))
      const ciphertext = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()])
      const parts = [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'))
      return ['v1', ...parts].join('.')
    }
    const db = new Database(file)
    try {
      const update = db.prepare('UPDATE parsed_config SET value = ? WHERE key = ?')
      for (const row of rows())
        update.run(firstForm(sealer.open(row.value, [row.key]), row.key), row.key)
    } finally {
      db.close()
    }
    expect(rows().every((row) => row.value.startsWith('v1.'))).toBe(true)
    const after = await start()
    expect(cacheCounts(after.logs)).toEqual({ hits: TENANTS, misses: 0, unreadable: 0 })
    for (let i = 0; i < TENANTS; i++) expect((await password(after.url, i, 1)).status).toBe(200)
    await after.close()
  })

  it('stores nothing when it closes before saving, and does not wait to', async () => {
    const issuer = await start()
    const closing = performance.now()
    await issuer.close()
    expect(performance.now() - closing).toBeLessThan(1_000)
    expect(rows()).toEqual([])
    expect(() => logLine(issuer.logs, 'parse results of tenant files stored')).toThrow()
  })

  it('keeps nothing without KEY_ENCRYPTION_SECRET', async () => {
    const issuer = await start(null)
    try {
      expect(() => cacheCounts(issuer.logs)).toThrow(/no "tenant files read/)
      expect((await password(issuer.url, 0, 1)).status).toBe(200)
    } finally {
      await issuer.close()
    }
    expect(rows()).toEqual([])
  })
})
