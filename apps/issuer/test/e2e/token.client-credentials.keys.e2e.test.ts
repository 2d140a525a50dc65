import { createSecretKey, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_POLL_INTERVAL_MS } from '../../src/issuer.js'
import { eventually } from '../support/eventually.js'
import { basicAuth, postForm, send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { pkce, signIn } from '../support/oauth.js'

// A client_credentials token has no refresh family, so only its own revocation, its key's, or
// the tenant's move away from HS256 ends it before exp; and a jti that names another sign-in's
// family borrows nothing from it.
const minute = 60_000
const TTL_MS = 2 * 3_600_000 // TOKEN_EXPIRATION_IN_HOURS' default
const SERVICE = { id: 'cc000000-0000-4000-8000-000000000021', secret: 'service-secret' }
const SPA = { id: 'cc000000-0000-4000-8000-000000000022', redirectUri: 'http://localhost:9000/cb' }

function post(issuer: InProcessIssuer, host: string, path: string, params: Record<string, string>) {
  return send(issuer.url, {
    method: 'POST',
    path,
    host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(SERVICE.id, SERVICE.secret),
    },
    body: new URLSearchParams(params).toString(),
  })
}

async function introspect(issuer: InProcessIssuer, host: string, token: string) {
  const res = await post(issuer, host, '/introspect', { token })
  expect(res.status).toBe(200)
  return res.json as Record<string, unknown>
}

async function serviceToken(issuer: InProcessIssuer, host: string): Promise<string> {
  const res = await post(issuer, host, '/token', { grant_type: 'client_credentials' })
  expect(res.status).toBe(200)
  return (res.json as { access_token: string }).access_token
}

describe('client_credentials tokens and signing keys', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('reports an RS256 service token inactive once its kid is revoked', async () => {
    const vars = {
      TESSERA_CONFIG: join(FIXTURES, 'service'),
      DATABASE_URL: `sqlite:${join(tmp.dir, 'kid.db')}`,
    }
    const issuer = await startIssuer({
      databaseUrl: vars.DATABASE_URL,
      config: vars.TESSERA_CONFIG,
    })
    const RS = { host: 'svc-rs.test', id: 'cc000000-0000-4000-8000-000000000011' }
    const reports = basicAuth(RS.id, 'reports-secret-01')
    const issue = () =>
      postForm(
        issuer.url,
        RS.host,
        { grant_type: 'client_credentials' },
        { authorization: reports },
      )
    const introspectRs = async (token: string) => {
      const res = await send(issuer.url, {
        method: 'POST',
        path: '/introspect',
        host: RS.host,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: reports },
        body: new URLSearchParams({ token }).toString(),
      })
      return res.json as Record<string, unknown>
    }
    try {
      const issued = await issue()
      const token = (issued.json as { access_token: string }).access_token
      const { kid } = decodeProtectedHeader(token)
      expect(await introspectRs(token)).toMatchObject({ active: true, sub: RS.id })

      const revoked = await runCli(['keys', 'revoke', '--tenant', 'svc-rs', '--kid', kid!], vars)
      expect(revoked.stderr).toBe('')
      expect(revoked.status).toBe(0)
      await eventually(async () => expect(await introspectRs(token)).toEqual({ active: false }), {
        timeoutMs: KEY_POLL_INTERVAL_MS + 5_000,
        intervalMs: 200,
      })
      const fresh = await issue()
      const freshToken = (fresh.json as { access_token: string }).access_token
      expect(decodeProtectedHeader(freshToken).kid).not.toBe(kid)
      expect(await introspectRs(freshToken)).toMatchObject({ active: true })
    } finally {
      await issuer.close()
    }
  }, 60_000)

  describe('a tenant that switches from HS256 to RS256', () => {
    const HOST = 'cc-switch.test'
    const ISSUER = `http://${HOST}`
    let offset = 0
    const clock = (): number => Date.now() + offset
    let config: string
    let issuer: InProcessIssuer
    let legit: string

    function writeTenant(algorithm: 'HS256' | 'RS256'): void {
      const provider = join(FIXTURES, 'basic', 'providers', 'users.mjs')
      writeFileSync(
        join(config, 'tenant.yaml'),
        [
          'name: cc-switch',
          'config:',
          `  hosts: [${HOST}]`,
          `  jwt_algorithm: ${algorithm}`,
          `  providers: ['${provider}']`,
          '  clients:',
          `    - client_id: ${SERVICE.id}`,
          `      client_secret: ${SERVICE.secret}`,
          '      grant_types: [client_credentials]',
          '      scopes: [read]',
          `    - client_id: ${SPA.id}`,
          '      grant_types: [authorization_code, refresh_token]',
          `      redirect_uris: [${SPA.redirectUri}]`,
          '      scopes: [read]',
          '',
        ].join('\n'),
      )
    }

    /** An HS256 token as anyone holding JWT_SECRET could make it, shaped like a service's. */
    function forge(jti: string, iatMs = clock()): Promise<string> {
      return new SignJWT({ client_id: SERVICE.id, scope: 'read', jti })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setSubject(SERVICE.id)
        .setAudience(ISSUER)
        .setIssuedAt(Math.floor(iatMs / 1000))
        .setExpirationTime(Math.floor((iatMs + TTL_MS) / 1000))
        .sign(createSecretKey(Buffer.from(JWT_SECRET, 'utf8')))
    }

    beforeAll(async () => {
      config = join(tmp.dir, 'switch-config')
      mkdirSync(config)
      writeTenant('HS256')
      issuer = await startIssuer({
        databaseUrl: `sqlite:${join(tmp.dir, 'switch.db')}`,
        config,
        clock,
      })
      legit = await serviceToken(issuer, HOST)
      expect(decodeProtectedHeader(legit).alg).toBe('HS256')
    }, 60_000)
    afterAll(async () => {
      await issuer.close()
    })

    it('never lets a forged jti borrow the live family of a sign-in', async () => {
      // A real sign-in of the SPA: its access token's jti names its refresh family.
      const { verifier, challenge } = pkce()
      const { code } = await signIn(issuer.url, HOST, {
        clientId: SPA.id,
        redirectUri: SPA.redirectUri,
        challenge,
      })
      const redeemed = await postForm(issuer.url, HOST, {
        grant_type: 'authorization_code',
        client_id: SPA.id,
        code,
        redirect_uri: SPA.redirectUri,
        code_verifier: verifier,
      })
      expect(redeemed.status).toBe(200)
      const spa = redeemed.json as { access_token: string; refresh_token: string }
      const familyId = (decodeJwt(spa.access_token).jti as string).split('.')[0]!

      // Signed with JWT_SECRET as the service's, its jti pointing at the SPA's live family.
      const borrowed = await forge(`${familyId}.${randomUUID()}`)
      expect(await introspect(issuer, HOST, borrowed)).toEqual({ active: false })
      // A plain forged jti is as active as the secret's holder can make it: HS256 is shared.
      expect(await introspect(issuer, HOST, await forge(randomUUID()))).toMatchObject({
        active: true,
      })
      // Revoking the borrowing token marks its own jti; the SPA's sign-in goes on.
      expect((await post(issuer, HOST, '/revoke', { token: borrowed })).status).toBe(200)
      const refreshed = await postForm(issuer.url, HOST, {
        grant_type: 'refresh_token',
        client_id: SPA.id,
        refresh_token: spa.refresh_token,
      })
      expect(refreshed.status).toBe(200)
    })

    it('keeps the HS256 service token issued before the switch, refuses one forged after', async () => {
      offset += 10 * minute
      writeTenant('RS256')
      expect(await issuer.issuer.reload()).toBe(true)
      offset += minute
      expect(await introspect(issuer, HOST, legit)).toMatchObject({
        active: true,
        sub: SERVICE.id,
      })
      const rs256 = await serviceToken(issuer, HOST)
      expect(decodeProtectedHeader(rs256).alg).toBe('RS256')
      expect(await introspect(issuer, HOST, rs256)).toMatchObject({ active: true })
      expect(await introspect(issuer, HOST, await forge(randomUUID()))).toEqual({ active: false })

      // One lifetime after the switch, no HS256 token is active any more.
      offset += TTL_MS
      expect(await introspect(issuer, HOST, legit)).toEqual({ active: false })
      expect(await introspect(issuer, HOST, await serviceToken(issuer, HOST))).toMatchObject({
        active: true,
      })
    }, 60_000)
  })
})
