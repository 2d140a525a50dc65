import { createSecretKey, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeProtectedHeader, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_POLL_INTERVAL_MS } from '../../src/issuer.js'
import { eventually } from '../support/eventually.js'
import { basicAuth, postForm, send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

// What introspection makes of a token whose key is gone or whose algorithm the
// tenant left behind. Each test runs its own issuer on an SQLite file.
const minute = 60_000
const TTL_MS = 2 * 3_600_000 // TOKEN_EXPIRATION_IN_HOURS' default
const APP = { id: '0a000000-0000-4000-8000-000000000001', secret: 'app-secret-012345' }

function post(issuer: InProcessIssuer, host: string, path: string, params: Record<string, string>) {
  return send(issuer.url, {
    method: 'POST',
    path,
    host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(APP.id, APP.secret),
    },
    body: new URLSearchParams(params).toString(),
  })
}

async function introspect(
  issuer: InProcessIssuer,
  host: string,
  token: string,
): Promise<Record<string, unknown>> {
  const res = await post(issuer, host, '/introspect', { token })
  expect(res.status).toBe(200)
  return res.json as Record<string, unknown>
}

async function passwordToken(issuer: InProcessIssuer, host: string): Promise<string> {
  const res = await postForm(
    issuer.url,
    host,
    { grant_type: 'password', username: 'alice', password: 'alice-password' },
    { authorization: basicAuth(APP.id, APP.secret) },
  )
  expect(res.status).toBe(200)
  return (res.json as { access_token: string }).access_token
}

describe('POST /introspect and signing keys', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('reports an RS256 token inactive once its kid is revoked with tessera keys revoke', async () => {
    const vars = {
      TESSERA_CONFIG: join(FIXTURES, 'introspect'),
      DATABASE_URL: `sqlite:${join(tmp.dir, 'kid.db')}`,
    }
    const issuer = await startIssuer({
      databaseUrl: vars.DATABASE_URL,
      config: vars.TESSERA_CONFIG,
    })
    try {
      const token = await passwordToken(issuer, 'shop.test')
      const { kid } = decodeProtectedHeader(token)
      expect(await introspect(issuer, 'shop.test', token)).toMatchObject({ active: true })

      const revoked = await runCli(['keys', 'revoke', '--tenant', 'shop', '--kid', kid!], vars)
      expect(revoked.stderr).toBe('')
      expect(revoked.status).toBe(0)
      // The issuer reads the key store on a poll; within it the kid is gone.
      await eventually(
        async () => expect(await introspect(issuer, 'shop.test', token)).toEqual({ active: false }),
        { timeoutMs: KEY_POLL_INTERVAL_MS + 5_000, intervalMs: 200 },
      )
      const fresh = await passwordToken(issuer, 'shop.test')
      expect(decodeProtectedHeader(fresh).kid).not.toBe(kid)
      expect(await introspect(issuer, 'shop.test', fresh)).toMatchObject({ active: true })
    } finally {
      await issuer.close()
    }
  }, 60_000)

  describe('a tenant that switches from HS256 to RS256', () => {
    const HOST = 'switch.test'
    const ISSUER = `http://${HOST}`
    let offset = 0
    const clock = (): number => Date.now() + offset
    let config: string
    let databaseUrl: string
    let issuer: InProcessIssuer
    let legit: string
    let switchedAt: number
    const vars = { KEY_PUBLISH_AHEAD_SECONDS: '0' }

    function writeTenant(algorithm: 'HS256' | 'RS256'): void {
      const provider = join(FIXTURES, 'basic', 'providers', 'users.mjs')
      writeFileSync(
        join(config, 'tenant.yaml'),
        [
          'name: switch',
          'config:',
          `  hosts: [${HOST}]`,
          `  jwt_algorithm: ${algorithm}`,
          `  providers: ['${provider}']`,
          '  clients:',
          `    - client_id: ${APP.id}`,
          `      client_secret: ${APP.secret}`,
          '      grant_types: [password]',
          '      scopes: [read]',
          '',
        ].join('\n'),
      )
    }

    /** An HS256 token as anyone holding JWT_SECRET could make it; times in epoch ms. */
    function forge(iatMs: number, expMs: number): Promise<string> {
      return new SignJWT({ client_id: APP.id, scope: 'read', jti: randomUUID() })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setSubject('user-mallory')
        .setAudience(ISSUER)
        .setIssuedAt(Math.floor(iatMs / 1000))
        .setExpirationTime(Math.floor(expMs / 1000))
        .sign(createSecretKey(Buffer.from(JWT_SECRET, 'utf8')))
    }

    beforeAll(async () => {
      config = join(tmp.dir, 'switch-config')
      mkdirSync(config)
      databaseUrl = `sqlite:${join(tmp.dir, 'switch.db')}`
      writeTenant('HS256')
      // RS256 signs at the switch itself here; keys.algorithm-switch.e2e.test.ts tests the wait.
      issuer = await startIssuer({ databaseUrl, config, clock, vars })
      legit = await passwordToken(issuer, HOST)
      expect(decodeProtectedHeader(legit).alg).toBe('HS256')

      offset += 10 * minute
      writeTenant('RS256')
      expect(await issuer.issuer.reload()).toBe(true)
      // The RS256 period starts with the tenant's first key, made on its first use.
      expect((await send(issuer.url, { path: '/.well-known/jwks.json', host: HOST })).status).toBe(
        200,
      )
      const since = issuer.issuer.registry.byHost(HOST)?.keyRing.rs256Since()
      if (since === undefined) throw new Error('the tenant did not switch')
      switchedAt = since
      offset += minute
    }, 60_000)
    afterAll(async () => {
      await issuer.close()
    })

    it('keeps the HS256 tokens issued before the switch, until they expire', async () => {
      expect(await introspect(issuer, HOST, legit)).toMatchObject({
        active: true,
        token_type: 'bearer',
      })
      const rs256 = await passwordToken(issuer, HOST)
      expect(decodeProtectedHeader(rs256).alg).toBe('RS256')
      expect(await introspect(issuer, HOST, rs256)).toMatchObject({ active: true })
    })

    it('refuses an HS256 token forged with JWT_SECRET after the switch', async () => {
      const forged = await forge(clock(), clock() + TTL_MS)
      expect(await introspect(issuer, HOST, forged)).toEqual({ active: false })
      const atTheSwitch = await forge(switchedAt + 1000, switchedAt + TTL_MS)
      expect(await introspect(issuer, HOST, atTheSwitch)).toEqual({ active: false })
    })

    it('refuses one dated before the switch that lives past one lifetime after it', async () => {
      const backdated = await forge(switchedAt - 5 * minute, switchedAt + TTL_MS + minute)
      expect(await introspect(issuer, HOST, backdated)).toEqual({ active: false })
      // Within the bound, a backdated token cannot be told from one issued before the switch.
      const inBound = await forge(switchedAt - 5 * minute, switchedAt + TTL_MS - minute)
      expect(await introspect(issuer, HOST, inBound)).toMatchObject({ active: true })
    })

    it('finds the same switch time after a restart, and no HS256 token one lifetime later', async () => {
      await issuer.close()
      issuer = await startIssuer({ databaseUrl, config, clock, vars })
      expect(issuer.issuer.registry.byHost(HOST)?.keyRing.rs256Since()).toBe(switchedAt)
      expect(await introspect(issuer, HOST, legit)).toMatchObject({ active: true })
      expect(await introspect(issuer, HOST, await forge(clock(), clock() + minute))).toEqual({
        active: false,
      })

      const inBound = await forge(switchedAt - minute, switchedAt + TTL_MS)
      offset += TTL_MS
      expect(clock()).toBeGreaterThan(switchedAt + TTL_MS)
      expect(await introspect(issuer, HOST, legit)).toEqual({ active: false })
      expect(await introspect(issuer, HOST, inBound)).toEqual({ active: false })
      const rs256 = await passwordToken(issuer, HOST)
      expect(await introspect(issuer, HOST, rs256)).toMatchObject({ active: true })
    }, 60_000)
  })
})
