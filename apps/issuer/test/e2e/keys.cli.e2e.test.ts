import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_POLL_INTERVAL_MS } from '../../src/issuer.js'
import { send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, RS, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { rsAccessToken } from '../support/keys.js'

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))
const CONFIG = join(FIXTURES, 'basic')
const SECRET = 'e2e-key-encryption-secret-0123456789abcdef'
const WRONG_SECRET = 'not-the-key-encryption-secret-0123456789'

/** The CLI's environment: only the given variables, never the test runner's. */
function env(vars: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', ...vars }
}

async function jwksKids(issuer: InProcessIssuer): Promise<string[]> {
  const res = await send(issuer.url, { path: '/.well-known/jwks.json', host: RS.host })
  return (res.json as { keys: { kid: string }[] }).keys.map((key) => key.kid)
}

async function jwks(issuer: InProcessIssuer): Promise<ReturnType<typeof createLocalJWKSet>> {
  const res = await send(issuer.url, { path: '/.well-known/jwks.json', host: RS.host })
  return createLocalJWKSet(res.json as Parameters<typeof createLocalJWKSet>[0])
}

function tokenFrom(issuer: InProcessIssuer): Promise<string> {
  return rsAccessToken(issuer.url)
}

/** Polls the JWKS until it lists exactly `expected`; returns how long that took. */
async function waitForJwks(issuer: InProcessIssuer, expected: string[]): Promise<number> {
  const started = Date.now()
  // The poll interval plus room for a slow machine; the assertion below is the real bound.
  const deadline = started + KEY_POLL_INTERVAL_MS + 3_000
  let kids = await jwksKids(issuer)
  while (JSON.stringify(kids) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    kids = await jwksKids(issuer)
  }
  expect(kids).toEqual(expected)
  return Date.now() - started
}

function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

function storedPrivateKeys(file: string): string[] {
  const db = new Database(file, { readonly: true })
  try {
    const rows = db.prepare('SELECT private_key FROM keys ORDER BY kid').all() as {
      private_key: string
    }[]
    return rows.map((row) => row.private_key)
  } finally {
    db.close()
  }
}

// Each test spawns the CLI a few times; on a loaded 2-core machine one spawn can take seconds.
describe('tessera keys', { timeout: 90_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('lists the key a first token created, as a table and as JSON', async () => {
    const file = join(tmp.dir, 'list.db')
    const created = Date.UTC(2026, 10, 22, 8)
    const issuer = await startIssuer({ databaseUrl: `sqlite:${file}`, clock: () => created })
    await tokenFrom(issuer)
    await issuer.close()
    // No JWT_SECRET: the keys commands sign nothing and do not need it.
    const vars = { TESSERA_CONFIG: CONFIG, DATABASE_URL: `sqlite:${file}` }

    const [table, json, hsOnly] = await Promise.all([
      runCli(['keys', 'list'], vars),
      runCli(['keys', 'list', '--json'], vars),
      runCli(['keys', 'list', '--json', '--tenant', 'hs'], vars),
    ])
    expect(table.stderr).toBe('')
    expect(table.status).toBe(0)
    expect(table.stdout).toBe(
      [
        'hs (signs with HS256)',
        '  no keys',
        '',
        'rs (signs with RS256)',
        '  KID         STATE   CREATED                   ALG',
        '  2026-11-22  active  2026-11-22T08:00:00.000Z  RS256',
        '',
      ].join('\n'),
    )

    expect(json.status).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual([
      {
        tenant: 'rs',
        kid: '2026-11-22',
        state: 'active',
        createdAt: '2026-11-22T08:00:00.000Z',
        signsFrom: '2026-11-22T08:00:00.000Z',
        alg: 'RS256',
      },
    ])
    expect(JSON.parse(hsOnly.stdout)).toEqual([])
  })

  it('refuses an unknown tenant or kid, and a missing --tenant, with exit 1', async () => {
    const vars = { TESSERA_CONFIG: CONFIG, DATABASE_URL: `sqlite:${tmp.dir}/errors.db` }
    const [tenant, kid, missing, hs] = await Promise.all([
      runCli(['keys', 'list', '--tenant', 'initech'], vars),
      runCli(['keys', 'revoke', '--tenant', 'rs', '--kid', '1999-01-01'], vars),
      runCli(['keys', 'rotate'], vars),
      runCli(['keys', 'rotate', '--tenant', 'hs'], vars),
    ])
    expect(tenant.status).toBe(1)
    expect(tenant.stderr).toBe(
      'tessera keys: unknown tenant "initech"; the configuration has: hs, rs\n',
    )
    expect(kid.status).toBe(1)
    expect(kid.stderr).toBe('tessera keys: tenant "rs" has no key "1999-01-01"\n')
    expect(missing.status).toBe(1)
    expect(missing.stderr).toBe(
      'tessera keys rotate: needs --tenant NAME; see tessera keys rotate --help\n',
    )
    expect(hs.status).toBe(1)
    expect(hs.stderr).toContain('tenant "hs" signs with HS256 and has no OpenID Connect clients')
  })

  describe('against a running issuer sharing the database', () => {
    let issuer: InProcessIssuer
    let vars: Record<string, string>
    let first: string
    let firstToken: string
    let second: string

    beforeAll(async () => {
      const file = join(tmp.dir, 'running.db')
      // Rotated keys sign at once here; keys.publish-ahead.e2e.test.ts tests the wait.
      vars = {
        JWT_SECRET,
        TESSERA_CONFIG: CONFIG,
        DATABASE_URL: `sqlite:${file}`,
        KEY_PUBLISH_AHEAD_SECONDS: '0',
      }
      // The real clock: the CLI, a separate process, rotates with it too.
      issuer = await startIssuer({ databaseUrl: vars.DATABASE_URL! })
    })
    afterAll(async () => {
      await issuer.close()
    })

    it('rotate: the issuer signs with the new kid within the poll interval, the old key still published', async () => {
      ;[first = ''] = await jwksKids(issuer)
      firstToken = await tokenFrom(issuer)
      expect(decodeProtectedHeader(firstToken).kid).toBe(first)

      const rotated = await runCli(['keys', 'rotate', '--tenant', 'rs'], vars)
      expect(rotated.stderr).toBe('')
      expect(rotated.status).toBe(0)
      second = /new active key (\S+)/.exec(rotated.stdout)?.[1] ?? ''
      expect(second).toMatch(/^\d{4}-\d{2}-\d{2}\.2$/)
      expect(rotated.stdout).toContain(`retired ${first}: stays in the JWKS until`)

      const took = await waitForJwks(issuer, [second, first])
      expect(took).toBeLessThanOrEqual(KEY_POLL_INTERVAL_MS + 2_000)
      const token = await tokenFrom(issuer)
      expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', kid: second })
      const keySet = await jwks(issuer)
      await expect(jwtVerify(token, keySet, { issuer: RS.issuer })).resolves.toBeDefined()
      await expect(jwtVerify(firstToken, keySet, { issuer: RS.issuer })).resolves.toBeDefined()

      const list = await runCli(['keys', 'list', '--tenant', 'rs', '--json'], vars)
      expect(JSON.parse(list.stdout)).toMatchObject([
        { kid: first, state: 'retired' },
        { kid: second, state: 'active' },
      ])
    })

    it('revoke: a retired kid leaves the running issuer JWKS within the poll interval', async () => {
      const revoked = await runCli(['keys', 'revoke', '--tenant', 'rs', '--kid', first], vars)
      expect(revoked.status).toBe(0)
      expect(revoked.stdout).toBe(
        `tenant "rs": revoked key ${first} (was retired); running issuers drop it from the ` +
          `JWKS within ${KEY_POLL_INTERVAL_MS / 1000} seconds\n`,
      )
      const took = await waitForJwks(issuer, [second])
      expect(took).toBeLessThanOrEqual(KEY_POLL_INTERVAL_MS + 2_000)
      await expect(jwtVerify(firstToken, await jwks(issuer))).rejects.toThrow()
    })

    it('revoke of the active key: a new key is made and the issuer signs with it', async () => {
      const revoked = await runCli(['keys', 'revoke', '--tenant', 'rs', '--kid', second], vars)
      expect(revoked.status).toBe(0)
      const third = /new active key: (\S+)/.exec(revoked.stdout)?.[1] ?? ''
      expect(third).toMatch(/^\d{4}-\d{2}-\d{2}\.3$/)
      await waitForJwks(issuer, [third])
      const token = await tokenFrom(issuer)
      expect(decodeProtectedHeader(token).kid).toBe(third)
      await expect(jwtVerify(token, await jwks(issuer))).resolves.toBeDefined()
    })
  })

  describe('KEY_ENCRYPTION_SECRET', () => {
    it('stores envelopes, and a wrong secret stops start before listening, changing nothing', async () => {
      const file = join(tmp.dir, 'encrypted.db')
      const databaseUrl = `sqlite:${file}`
      const issuer = await startIssuer({ databaseUrl, vars: { KEY_ENCRYPTION_SECRET: SECRET } })
      const before = await jwksKids(issuer)
      await issuer.close()
      expect(storedPrivateKeys(file)).toEqual([expect.stringMatching(/^enc:v1:/)])

      const hash = sha256File(file)
      const start = (extra: Record<string, string>, command: 'start' | 'dev' = 'start') =>
        spawnSync(process.execPath, [CLI, command, '--host', '127.0.0.1', '--port', '0'], {
          env: env({ JWT_SECRET, TESSERA_CONFIG: CONFIG, DATABASE_URL: databaseUrl, ...extra }),
          encoding: 'utf8',
          timeout: 20_000,
        })

      const wrong = start({ KEY_ENCRYPTION_SECRET: WRONG_SECRET })
      expect(wrong.status).toBe(1)
      expect(wrong.stderr).toContain(
        'tessera: KEY_ENCRYPTION_SECRET does not decrypt the stored keys of tenant "rs"',
      )
      expect(wrong.stdout).not.toContain('listening')
      for (const output of [wrong.stdout, wrong.stderr]) {
        expect(output).not.toContain(WRONG_SECRET)
        expect(output).not.toContain(SECRET)
      }
      expect(sha256File(file)).toBe(hash)

      // start refuses the RS256 tenant outright; dev, which would serve it, finds its keys sealed.
      const unset = start({})
      expect(unset.status).toBe(1)
      expect(unset.stderr).toContain('KEY_ENCRYPTION_SECRET: not set: tessera start refuses')
      const unsetDev = start({}, 'dev')
      expect(unsetDev.status).toBe(1)
      expect(unsetDev.stderr).toContain('the stored keys of tenant "rs" are encrypted')
      expect(sha256File(file)).toBe(hash)
      expect(existsSync(`${file}-wal`) ? readFileSync(`${file}-wal`).length : 0).toBe(0)

      const again = await startIssuer({ databaseUrl, vars: { KEY_ENCRYPTION_SECRET: SECRET } })
      expect(await jwksKids(again)).toEqual(before)
      await again.close()
    })

    it('refuses a secret shorter than 32 characters, without printing it', () => {
      const short = 'too-short-secret'
      const result = spawnSync(process.execPath, [CLI, 'start', '--port', '0'], {
        env: env({
          JWT_SECRET,
          TESSERA_CONFIG: CONFIG,
          DATABASE_URL: `sqlite:${tmp.dir}/short.db`,
          KEY_ENCRYPTION_SECRET: short,
        }),
        encoding: 'utf8',
        timeout: 20_000,
      })
      expect(result.status).toBe(1)
      expect(result.stderr).toContain(
        'environment: KEY_ENCRYPTION_SECRET: must be at least 32 characters',
      )
      expect(result.stderr).not.toContain(short)
      expect(result.stdout).not.toContain('listening')
    })

    it('encrypts keys stored before the secret was set, keeping their kids', async () => {
      const file = join(tmp.dir, 'migrate.db')
      const databaseUrl = `sqlite:${file}`
      const plain = await startIssuer({ databaseUrl })
      const before = await jwksKids(plain)
      const token = await tokenFrom(plain)
      await plain.close()
      expect(storedPrivateKeys(file)).toEqual([expect.stringMatching(/^\{"kty":"RSA"/)])

      const sealed = await startIssuer({ databaseUrl, vars: { KEY_ENCRYPTION_SECRET: SECRET } })
      try {
        expect(storedPrivateKeys(file)).toEqual([expect.stringMatching(/^enc:v1:/)])
        expect(await jwksKids(sealed)).toEqual(before)
        await expect(jwtVerify(token, await jwks(sealed))).resolves.toBeDefined()
        const fresh = await tokenFrom(sealed)
        expect(decodeProtectedHeader(fresh).kid).toBe(before[0])
      } finally {
        await sealed.close()
      }
    })

    it('start refuses RS256 tenants when it is not set; dev serves them with a warning', async () => {
      const file = join(tmp.dir, 'warn.db')
      const vars = { JWT_SECRET, TESSERA_CONFIG: CONFIG, DATABASE_URL: `sqlite:${file}` }
      const refused = await runCli(['start', '--host', '127.0.0.1', '--port', '0'], vars)
      expect(refused.status).toBe(1)
      expect(refused.stdout).not.toContain('tessera issuer listening')
      expect(refused.stderr).toContain('"rs"')

      const dev = await startIssuer({ command: 'dev', env: vars })
      try {
        const about = dev.logs
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: number; msg: string })
          .filter((line) => line.msg.includes('KEY_ENCRYPTION_SECRET'))
        expect(about).toEqual([
          expect.objectContaining({
            level: 40,
            msg: expect.stringContaining('UNENCRYPTED') as unknown,
          }),
        ])
        const jwks = await send(dev.url, { path: '/.well-known/jwks.json', host: RS.host })
        expect((jwks.json as { keys: unknown[] }).keys).toHaveLength(1)
      } finally {
        await dev.close()
      }
    })
  })
})
