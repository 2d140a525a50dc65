/**
 * The admin API's authentication, throttling and log, and the examples of
 * docs/admin-api.md run as written, against a real `tessera dev` process serving examples/.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_MAX_FAILURES } from '../../src/http/admin-auth.js'
import { REPO } from '../deploy/manifests.js'
import {
  ADMIN_TOKEN,
  createAdminClient,
  expectDocumented,
  expectProblem,
} from '../support/admin-api.js'
import { eventually } from '../support/eventually.js'
import { send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'

const run = promisify(execFile)

/** The `sh` blocks of docs/admin-api.md that call the API (not the one that starts the issuer). */
function documentedCalls(): string[] {
  const doc = readFileSync(`${REPO}docs/admin-api.md`, 'utf8')
  return [...doc.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .filter((block) => !block.includes('tessera start'))
}

describe('the admin API: authentication, log, documented examples', { timeout: 120_000 }, () => {
  const tmp = tempDir()
  let cli: IssuerProcess
  const { call, calls, observed } = createAdminClient(() => cli.admin)

  beforeAll(async () => {
    cli = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: `${REPO}examples`,
        DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
        ADMIN_TOKEN,
        // Rotated keys sign at once here; keys.publish-ahead.e2e.test.ts tests the wait.
        KEY_PUBLISH_AHEAD_SECONDS: '0',
      },
    })
    // Keys are made on first use: the documented rotation retires the key globex signs with.
    const jwks = await send(cli.url, { path: '/.well-known/jwks.json', host: 'globex.localhost' })
    expect(jwks.status).toBe(200)
  })
  afterAll(async () => {
    await cli?.close()
    tmp.remove()
  })

  it('says in the listening line that the admin API is served, without the token', () => {
    const line = cli.logs.find((entry) => entry.includes('"msg":"tessera issuer listening"'))!
    expect(JSON.parse(line)).toMatchObject({ admin: cli.admin, adminApi: true })
    expect(line).not.toContain(ADMIN_TOKEN)
  })

  it('runs the curl examples of docs/admin-api.md as written', async () => {
    const blocks = documentedCalls()
    // Setup, tenants, keys, rotate, revoke.
    expect(blocks).toHaveLength(5)
    const [setup, ...calls] = blocks
    const outputs: unknown[] = []
    for (const block of calls) {
      let script = `${setup!.replace('http://127.0.0.1:9464', cli.admin)}\n${block}`
      if (block.includes('/revoke')) {
        // The example revokes a retired key; here, the one this rotation (at once) retired.
        const retired = (outputs.at(-1) as { retired: { kid: string }[] }).retired[0]!.kid
        script = script.replace('2026-03-10', retired)
      }
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
        env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN },
      })
      outputs.push(JSON.parse(stdout))
    }
    const [tenants, keys, rotated, revoked] = outputs as [
      { tenants: { name: string }[] },
      { keys: unknown[] },
      { kid: string },
      { changed: boolean },
    ]
    expect(tenants.tenants.map((tenant) => tenant.name)).toEqual(['acme', 'globex'])
    expect(keys.keys).toHaveLength(1)
    expect(rotated.kid).toMatch(/^\d{4}-\d{2}-\d{2}(?:\.\d+)?$/)
    expect(revoked).toMatchObject({ previousState: 'retired', changed: true })
  })

  describe('authentication', () => {
    const bearer = { token: null }
    it('401 with WWW-Authenticate: Bearer without the header, and the bare challenge', async () => {
      const res = await call('GET', '/admin/tenants', bearer)
      expectProblem(res, 401)
      expect(res.headers['www-authenticate']).toBe('Bearer realm="tessera-admin"')
    })

    it('401 for a wrong token, a near miss, another scheme, a token in the query', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ authorization: 'Bearer wrong' }, 'invalid_token'],
        [{ authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` }, 'invalid_token'],
        [{ authorization: `Bearer ${ADMIN_TOKEN}x` }, 'invalid_token'],
        [{ authorization: `Bearer ${ADMIN_TOKEN} ${ADMIN_TOKEN}` }, 'invalid_request'],
        [
          { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
          'invalid_request',
        ],
        [{ authorization: ADMIN_TOKEN }, 'invalid_request'],
        [{ authorization: 'Bearer' }, 'invalid_request'],
        [{ authorization: `Bearer ${'A'.repeat(10_240)}` }, 'invalid_token'],
      ]
      for (const [headers, error] of cases) {
        const res = await call('POST', '/admin/tenants/globex/keys/rotate', {
          ...bearer,
          headers,
        })
        expectProblem(res, 401)
        expect(res.headers['www-authenticate']).toBe(
          `Bearer realm="tessera-admin", error="${error}"`,
        )
      }
      const query = await call('GET', `/admin/tenants?access_token=${ADMIN_TOKEN}`, bearer)
      expectProblem(query, 401)
    })

    it('refuses before routing: an unknown path or tenant also gets 401', async () => {
      expectProblem(await call('GET', '/admin/nothing-here', bearer), 401)
      expectProblem(await call('GET', '/admin/tenants/nope/keys', bearer), 401)
    })

    it('takes the scheme in any case, and the token with trailing whitespace HTTP drops', async () => {
      for (const authorization of [
        `bearer ${ADMIN_TOKEN}`,
        `BEARER ${ADMIN_TOKEN}`,
        `Bearer ${ADMIN_TOKEN} `,
        `Bearer ${ADMIN_TOKEN}\t`,
      ]) {
        const res = await call('GET', '/admin/tenants', { ...bearer, headers: { authorization } })
        expect(res.status, JSON.stringify(authorization)).toBe(200)
      }
    })
  })

  describe('the log', () => {
    it('has one info line per admin call: client, method, route, tenant, kid, status', async () => {
      await call('POST', '/admin/tenants/globex/keys/1999-01-01/revoke')
      // Log lines reach the pipe a moment after the answer.
      const lines = await eventually(() => {
        const logged = cli.logs
          .filter((line) => line.includes('"msg":"admin call"'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
        // One line per call: the calls made here, and the documented examples' four.
        expect(logged).toHaveLength(calls() + 4)
        return logged
      })
      expect(lines.at(-1)).toMatchObject({
        level: 30,
        client: '127.0.0.1',
        method: 'POST',
        route: '/admin/tenants/:tenant/keys/:kid/revoke',
        tenant: 'globex',
        kid: '1999-01-01',
        status: 404,
      })
      expect(lines.some((line) => line.status === 401)).toBe(true)
      // A 5000-character path is cut in the log.
      await call('GET', `/admin/tenants/${'a'.repeat(5000)}/keys`)
      const last = await eventually(() => {
        const line = cli.logs.filter((entry) => entry.includes('"msg":"admin call"')).at(-1)!
        expect(JSON.parse(line)).toMatchObject({ tenant: `${'a'.repeat(200)}…`, status: 404 })
        return line
      })
      expect(last.length).toBeLessThan(1000)
    })

    it('never holds the token, nor any Authorization value', () => {
      const text = cli.logs.join('\n')
      expect(text).not.toContain(ADMIN_TOKEN)
      expect(text).not.toContain(ADMIN_TOKEN.slice(0, 16))
      expect(text).not.toMatch(/bearer/i)
    })
  })

  // Last: it locks 127.0.0.1's wrong tokens out of this process's admin API for the window.
  describe('throttling', () => {
    it(`answers 429 with Retry-After after ${ADMIN_MAX_FAILURES} failures, the right token 200`, async () => {
      let locked: Awaited<ReturnType<typeof call>> | undefined
      for (let attempt = 0; attempt < 100; attempt++) {
        const res = await call('GET', '/admin/tenants', { token: `wrong-token-${attempt}` })
        if (res.status === 429) locked ??= res
        else expect(res.status).toBe(401)
      }
      expect(locked).toBeDefined()
      expectProblem(locked!, 429)
      const seconds = Number(locked!.headers['retry-after'])
      expect(seconds).toBeGreaterThan(0)
      expect(seconds).toBeLessThanOrEqual(60)
      // The operator, behind the same address, is not locked out.
      expect((await call('GET', '/admin/tenants')).status).toBe(200)
      expectProblem(await call('GET', '/admin/tenants', { token: 'wrong-token' }), 429)
      // The tenants' port and the listener's other paths are not affected.
      expect((await send(cli.admin, { path: '/healthz', host: 'probe' })).status).toBe(200)
    })

    it('documents every status observed here, 429 included', () => {
      expect([...(observed.get('GET /admin/tenants') ?? [])]).toContain(429)
      expectDocumented(observed)
    })
  })
})

describe('ADMIN_TOKEN settings', () => {
  it('warns that ADMIN_TOKEN does nothing with ADMIN_PORT=off', async () => {
    const tmp = tempDir()
    const off = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: join(FIXTURES, 'basic'),
        DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
        ADMIN_PORT: 'off',
        ADMIN_TOKEN,
      },
    })
    try {
      const lines = off.logs
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: 'ADMIN_TOKEN is set but ADMIN_PORT=off: the admin API is not served anywhere',
        }),
      )
      expect(lines).toContainEqual(expect.objectContaining({ admin: 'off', adminApi: false }))
      expect(off.logs.join('\n')).not.toContain(ADMIN_TOKEN)
    } finally {
      await off.close()
      tmp.remove()
    }
  })

  it('refuses a short token before listening, without repeating it', async () => {
    const short = 'too-short-admin-token'
    const result = await runCli(['dev', '--port', '0', '--host', '127.0.0.1'], {
      JWT_SECRET,
      TESSERA_CONFIG: join(FIXTURES, 'basic'),
      DATABASE_URL: 'memory:',
      ADMIN_PORT: '0',
      ADMIN_TOKEN: short,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('environment: ADMIN_TOKEN: must be at least 32 characters')
    expect(result.stderr + result.stdout).not.toContain(short)
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/)
  })
})
