/**
 * The admin API over HTTP on the admin listener of a real `tessera dev`
 * process with a SQLite file: each route, each error, parallel rotations. Authentication, the
 * log and the documented examples are in admin-api.auth.e2e.test.ts.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ADMIN_TOKEN,
  createAdminClient,
  documentedOperations,
  expectDocumented,
  expectProblem,
} from '../support/admin-api.js'
import { send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, HS, JWT_SECRET, RS, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { rsTokenKid } from '../support/keys.js'

const KID = /^\d{4}-\d{2}-\d{2}(?:\.\d+)?$/

interface KeyEntry {
  tenant: string
  kid: string
  state: 'active' | 'retired' | 'revoked'
  createdAt: string
  retiredAt?: string
  publishedUntil?: string
  alg: 'RS256'
}
interface KeyList {
  tenant: string
  jwt_algorithm: string
  keys: KeyEntry[]
}

describe('the admin API', { timeout: 120_000 }, () => {
  const tmp = tempDir()
  const vars = {
    JWT_SECRET,
    TESSERA_CONFIG: join(FIXTURES, 'basic'),
    DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
    ADMIN_TOKEN,
    // Rotated keys sign at once here; keys.publish-ahead.e2e.test.ts tests the wait.
    KEY_PUBLISH_AHEAD_SECONDS: '0',
  }
  let cli: IssuerProcess
  const { call, observed } = createAdminClient(() => cli.admin)

  const jwksKids = async (): Promise<string[]> => {
    const res = await send(cli.url, { path: '/.well-known/jwks.json', host: RS.host })
    expect(res.status).toBe(200)
    return (res.json as { keys: { kid: string }[] }).keys.map((key) => key.kid)
  }
  const tokenKid = (): Promise<string | undefined> => rsTokenKid(cli.url)
  const keyList = async (tenant = 'rs'): Promise<KeyList> => {
    const res = await call('GET', `/admin/tenants/${tenant}/keys`)
    expect(res.status).toBe(200)
    return res.json as KeyList
  }
  const activeKid = async (): Promise<string> => {
    const active = (await keyList()).keys.filter((key) => key.state === 'active')
    expect(active).toHaveLength(1)
    return active[0]!.kid
  }
  beforeAll(async () => {
    cli = await startIssuer({ command: 'dev', env: vars })
    // The first use of rs: its key is made on first use, not by the start.
    expect((await send(cli.url, { path: '/.well-known/jwks.json', host: 'rs.test' })).status).toBe(
      200,
    )
  })
  afterAll(async () => {
    await cli?.close()
    tmp.remove()
  })

  describe('GET /admin/tenants', () => {
    it('lists each tenant: name, hosts, issuer, algorithm, clients by id and name', async () => {
      const res = await call('GET', '/admin/tenants')
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      expect(res.headers['cache-control']).toBe('no-store')
      // `dev` gives a first host written without a port the port it listens on.
      const port = new URL(cli.url).port
      expect(res.json).toEqual({
        tenants: [
          {
            name: 'hs',
            hosts: ['hs.test', 'alias.hs.test:8443'],
            issuer: `http://hs.test:${port}`,
            jwt_algorithm: 'HS256',
            clients: [
              { client_id: HS.client },
              { client_id: HS.codeOnlyClient, client_name: 'Test SPA' },
              { client_id: '55555555-5555-4555-8555-555555555555', client_name: 'Second App' },
              { client_id: HS.publicPasswordClient },
            ],
          },
          {
            name: 'rs',
            hosts: ['rs.test'],
            issuer: `http://rs.test:${port}`,
            jwt_algorithm: 'RS256',
            clients: [{ client_id: RS.client }],
          },
        ],
      })
      for (const secret of [HS.secret, RS.secret, JWT_SECRET, ADMIN_TOKEN]) {
        expect(res.text).not.toContain(secret)
      }
    })

    it('answers HEAD like GET, without a body', async () => {
      const res = await call('HEAD', '/admin/tenants')
      expect(res.status).toBe(200)
      expect(res.text).toBe('')
    })
  })

  describe('GET /admin/tenants/{t}/keys', () => {
    it('lists the keys as `tessera keys list --json` does, without key material', async () => {
      const listed = await keyList()
      expect(listed.tenant).toBe('rs')
      expect(listed.jwt_algorithm).toBe('RS256')
      expect(listed.keys).toHaveLength(1)
      expect(listed.keys[0]).toMatchObject({ tenant: 'rs', state: 'active', alg: 'RS256' })
      expect(listed.keys[0]!.kid).toMatch(KID)
      expect(await jwksKids()).toEqual([listed.keys[0]!.kid])
      const text = JSON.stringify(listed)
      for (const member of ['"d"', '"n"', '"p"', 'privateKey', 'PRIVATE']) {
        expect(text).not.toContain(member)
      }
      const cli = await runCli(['keys', 'list', '--json', '--tenant', 'rs', '--dev'], vars)
      expect(cli.stderr).toBe('')
      expect(JSON.parse(cli.stdout)).toEqual(listed.keys)
    })

    it('lists no keys for an HS256 tenant that never had RS256 ones', async () => {
      expect(await keyList('hs')).toEqual({ tenant: 'hs', jwt_algorithm: 'HS256', keys: [] })
    })
  })

  describe('POST /admin/tenants/{t}/keys/rotate and /{kid}/revoke', () => {
    it('rotates: 201 with the new kid; this replica signs and publishes it at once', async () => {
      const before = await activeKid()
      const res = await call('POST', '/admin/tenants/rs/keys/rotate')
      expect(res.status, res.text).toBe(201)
      const body = res.json as {
        tenant: string
        kid: string
        retired: { kid: string; publishedUntil: string }[]
        propagatesWithinSeconds: number
      }
      expect(body.tenant).toBe('rs')
      expect(body.kid).toMatch(KID)
      expect(body.kid).not.toBe(before)
      expect(body.retired.map((retired) => retired.kid)).toEqual([before])
      // JWKS_GRACE_HOURS defaults to 2 × the 2-hour token lifetime.
      const until = Date.parse(body.retired[0]!.publishedUntil) - Date.now()
      expect(until).toBeGreaterThan(4 * 3_600_000 - 60_000)
      expect(until).toBeLessThanOrEqual(4 * 3_600_000)
      expect(body.propagatesWithinSeconds).toBe(5)
      expect(await activeKid()).toBe(body.kid)
      expect(await tokenKid()).toBe(body.kid)
      expect((await jwksKids()).sort()).toEqual([before, body.kid].sort())
    })

    it('accepts an empty JSON object as the body, as well as none', async () => {
      const res = await call('POST', '/admin/tenants/rs/keys/rotate', { body: ' {}\n' })
      expect(res.status, res.text).toBe(201)
    })

    it('revokes a retired key: it leaves the JWKS at once; again, nothing changes', async () => {
      const retired = (await keyList()).keys.find((key) => key.state === 'retired')!
      const res = await call('POST', `/admin/tenants/rs/keys/${retired.kid}/revoke`, {
        body: '{}',
      })
      expect(res.status, res.text).toBe(200)
      expect(res.json).toEqual({
        tenant: 'rs',
        kid: retired.kid,
        previousState: 'retired',
        changed: true,
        propagatesWithinSeconds: 5,
      })
      expect(await jwksKids()).not.toContain(retired.kid)

      const again = await call('POST', `/admin/tenants/rs/keys/${retired.kid}/revoke`)
      expect(again.status).toBe(200)
      expect(again.json).toMatchObject({ previousState: 'revoked', changed: false })
    })

    it('revokes the active key as the CLI does: a replacement is made and signs', async () => {
      const active = await activeKid()
      const res = await call('POST', `/admin/tenants/rs/keys/${active}/revoke`)
      expect(res.status, res.text).toBe(200)
      const body = res.json as { previousState: string; newActiveKid: string }
      expect(body.previousState).toBe('active')
      expect(body.newActiveKid).toMatch(KID)
      expect(await activeKid()).toBe(body.newActiveKid)
      expect(await tokenKid()).toBe(body.newActiveKid)
      expect(await jwksKids()).not.toContain(active)
      expect((await keyList()).keys.find((key) => key.kid === active)?.state).toBe('revoked')
    })

    it('revokes once from ten revocations of the active key at once: one replacement', async () => {
      const active = await activeKid()
      const results = await Promise.all(
        Array.from({ length: 10 }, () => call('POST', `/admin/tenants/rs/keys/${active}/revoke`)),
      )
      expect(results.map((res) => res.status)).toEqual(Array(10).fill(200))
      const bodies = results.map((res) => res.json as { changed: boolean; newActiveKid?: string })
      const changed = bodies.filter((body) => body.changed)
      expect(changed).toHaveLength(1)
      expect(bodies.filter((body) => body.newActiveKid !== undefined)).toHaveLength(1)
      expect(await activeKid()).toBe(changed[0]!.newActiveKid)
    })

    it('makes ten distinct keys from ten rotations at once, and one kid names one key', async () => {
      const before = (await keyList()).keys.map((key) => key.kid)
      const results = await Promise.all(
        Array.from({ length: 10 }, () => call('POST', '/admin/tenants/rs/keys/rotate')),
      )
      expect(results.map((res) => res.status)).toEqual(Array(10).fill(201))
      const kids = results.map((res) => (res.json as { kid: string }).kid)
      expect(new Set(kids).size).toBe(10)
      for (const kid of kids) expect(before).not.toContain(kid)
      const after = (await keyList()).keys
      expect(after).toHaveLength(before.length + 10)
      expect(new Set(after.map((key) => key.kid)).size).toBe(after.length)
      expect(after.filter((key) => key.state === 'active')).toHaveLength(1)
      // The last rotation served is the active key; every other new one is retired, published.
      const published = await jwksKids()
      expect(new Set(published).size).toBe(published.length)
      for (const kid of kids) expect(published).toContain(kid)
    })
  })

  describe('errors, as RFC 9457 problem details', () => {
    it('404 for an unknown tenant, on every tenant route', async () => {
      for (const [method, path] of [
        ['GET', '/admin/tenants/nope/keys'],
        ['POST', '/admin/tenants/nope/keys/rotate'],
        ['POST', '/admin/tenants/nope/keys/2026-01-01/revoke'],
      ] as const) {
        const body = expectProblem(
          await call(method, path),
          404,
          'tag:tessera.dev,2026:problem:unknown-tenant',
        )
        expect(body.detail).toBe('unknown tenant "nope"; the configuration has: hs, rs')
      }
    })

    it('404 for an unknown kid, and nothing changes', async () => {
      const before = await keyList()
      const body = expectProblem(
        await call('POST', '/admin/tenants/rs/keys/1999-01-01/revoke'),
        404,
        'tag:tessera.dev,2026:problem:unknown-kid',
      )
      expect(body.detail).toBe('tenant "rs" has no key "1999-01-01"')
      expect(await keyList()).toEqual(before)
    })

    it('409 for rotating an HS256 tenant without OpenID Connect clients, as the CLI refuses it', async () => {
      const body = expectProblem(
        await call('POST', '/admin/tenants/hs/keys/rotate'),
        409,
        'tag:tessera.dev,2026:problem:not-rs256',
      )
      expect(body.detail).toBe(
        'tenant "hs" signs with HS256 and has no OpenID Connect clients, so it has no RS256 key ' +
          'to rotate (set jwt_algorithm: RS256 to switch it)',
      )
      const cli = await runCli(['keys', 'rotate', '--tenant', 'hs', '--dev'], vars)
      expect(cli.status).toBe(1)
      expect(cli.stderr).toBe(`tessera keys: ${String(body.detail)}\n`)
      expect(await keyList('hs')).toEqual({ tenant: 'hs', jwt_algorithm: 'HS256', keys: [] })
    })

    it('400 for a body that is not JSON or not an empty object, 415 for another type', async () => {
      const before = await keyList()
      const cases: [string, number, Record<string, string>?][] = [
        ['{"kid":', 400],
        ['[]', 400],
        ['null', 400],
        ['"rotate"', 400],
        ['{"force":true}', 400],
        ['{"__proto__":{"x":1}}', 400],
        ['force=true', 415, { 'content-type': 'application/x-www-form-urlencoded' }],
        ['{}', 415, { 'content-type': 'text/plain' }],
        ['{}', 415, { 'content-type': 'application/json; charset=latin1' }],
      ]
      for (const [body, status, headers] of cases) {
        expectProblem(
          await call('POST', '/admin/tenants/rs/keys/rotate', {
            body,
            ...(headers ? { headers } : {}),
          }),
          status,
        )
      }
      expect(await keyList()).toEqual(before)
    })

    it('413 for a huge body, declared or not, and nothing changes', async () => {
      const before = await keyList()
      const huge = `{"pad":"${'x'.repeat(1_000_000)}"}`
      expectProblem(await call('POST', '/admin/tenants/rs/keys/rotate', { body: huge }), 413)
      const chunked = await call('POST', '/admin/tenants/rs/keys/rotate', {
        body: huge,
        headers: { 'transfer-encoding': 'chunked' },
      })
      expectProblem(chunked, 413)
      expect(await keyList()).toEqual(before)
    })

    it('405 with Allow for another method on each route', async () => {
      const cases = [
        ['POST', '/admin/tenants', 'GET, HEAD'],
        ['DELETE', '/admin/tenants/rs/keys', 'GET, HEAD'],
        ['GET', '/admin/tenants/rs/keys/rotate', 'POST'],
        ['PUT', '/admin/tenants/rs/keys/2026-01-01/revoke', 'POST'],
      ] as const
      for (const [method, path, allow] of cases) {
        const res = await call(method, path)
        expectProblem(res, 405)
        expect(res.headers.allow).toBe(allow)
      }
    })

    it('404 for other /admin paths and hostile path values, never a 500', async () => {
      const paths = [
        '/admin',
        '/admin/',
        '/admin/tenants/',
        '/ADMIN/tenants',
        '/admin/Tenants',
        '/admin/tenants/rs',
        '/admin/tenants/rs/keys/',
        '/admin/tenants/%ZZ/keys',
        '/admin/tenants/..%2Frs/keys',
        '/admin/tenants/rs%2F..%2Fhs/keys',
        `/admin/tenants/${'a'.repeat(5000)}/keys`,
        '/admin/tenants/%00/keys',
        '/admin/tenants/rs/keys/%E2%80%AE/revoke',
      ]
      for (const path of paths) {
        const res = await call(path.includes('revoke') ? 'POST' : 'GET', path)
        if (path === '/ADMIN/tenants') {
          // Not an /admin path at all: the listener's own 404.
          expect(res.status).toBe(404)
          continue
        }
        expectProblem(res, 404)
      }
    })
  })

  describe('the documentation', () => {
    it('documents every status these tests observed on a documented operation', () => {
      // Every documented operation was exercised, and answered only what is documented.
      expect([...observed.keys()].sort()).toEqual([...documentedOperations().keys()].sort())
      expectDocumented(observed)
    })
  })
})
