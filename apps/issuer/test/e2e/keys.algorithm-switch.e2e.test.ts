/**
 * A tenant's signing-algorithm history. A switch from HS256 to RS256 publishes the
 * first RS256 key and goes on signing HS256 for KEY_PUBLISH_AHEAD_SECONDS, so verifiers that
 * fetched the (empty) JWKS just before the switch never meet a kid they may not refetch for;
 * and a tenant that was RS256 from its first key takes no HS256 token, however it is dated.
 * Run with PUBLISH_AHEAD_SECONDS=0 in the environment, the switch shows the failures it prevents.
 */
import { createSecretKey, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createVerifier } from '@tessera/verifier'
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  generateKeyPair,
  jwtVerify,
  SignJWT,
} from 'jose'
import type { JWTHeaderParameters } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loopbackFetch } from '../support/fetch.js'
import { basicAuth, postForm, send } from '../support/http.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { OIDC_RS } from '../support/oidc.js'

const AHEAD_SECONDS = Number(process.env.PUBLISH_AHEAD_SECONDS ?? 8)
/** Both verifiers may refetch this long after their last fetch: shorter than the delay. */
const COOLDOWN_MS = 3_000
const POLL_MS = 5_000
const APP = { id: '0a000000-0000-4000-8000-000000000001', secret: 'app-secret' }
const secretKey = createSecretKey(Buffer.from(JWT_SECRET, 'utf8'))

describe('keys and the tenant algorithm history', { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(() => tmp.remove())

  describe('a switch from HS256 to RS256', () => {
    const HOST = 'switch.test'
    const ISSUER = `http://${HOST}`
    let config: string
    let issuer: InProcessIssuer

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

    async function token(): Promise<string> {
      const res = await postForm(
        issuer.url,
        HOST,
        { grant_type: 'password', username: 'alice', password: 'alice-password' },
        { authorization: basicAuth(APP.id, APP.secret) },
      )
      expect(res.status).toBe(200)
      return (res.json as { access_token: string }).access_token
    }

    beforeAll(async () => {
      config = join(tmp.dir, 'switch-config')
      mkdirSync(config)
      writeTenant('HS256')
      issuer = await startIssuer({
        databaseUrl: `sqlite:${join(tmp.dir, 'switch.db')}`,
        config,
        vars: { KEY_PUBLISH_AHEAD_SECONDS: String(AHEAD_SECONDS) },
      })
    })
    afterAll(async () => {
      await issuer?.close()
    })

    it('two verifiers that fetched the JWKS just before the switch never fail', async () => {
      const ours = createVerifier({
        issuer: ISSUER,
        audience: ISSUER,
        secret: JWT_SECRET,
        cooldown: COOLDOWN_MS,
        fetch: loopbackFetch(issuer.url),
      })
      const jwks = createRemoteJWKSet(new URL('/.well-known/jwks.json', issuer.url), {
        headers: { host: HOST },
        cooldownDuration: COOLDOWN_MS,
      })
      const byAlg = (header: JWTHeaderParameters) =>
        header.alg === 'HS256' ? secretKey : jwks(header)
      const verifiers = [
        async (jwt: string) => {
          await ours.verify(jwt)
        },
        async (jwt: string) => {
          await jwtVerify(jwt, byAlg, { issuer: ISSUER, audience: ISSUER })
        },
      ]
      const hs256 = await token()
      expect(decodeProtectedHeader(hs256).alg).toBe('HS256')
      for (const verify of verifiers) await verify(hs256)
      // Both fetch the tenant's JWKS (empty under HS256) when a token names a kid they lack.
      const stranger = await generateKeyPair('RS256')
      const unknownKid = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'none' })
        .setIssuer(ISSUER)
        .setAudience(ISSUER)
        .setExpirationTime('1h')
        .sign(stranger.privateKey)
      await expect(ours.verify(unknownKid)).rejects.toThrow(/unknown key/)
      await expect(jwks({ alg: 'RS256', kid: 'none' })).rejects.toThrow(/no applicable key/)

      writeTenant('RS256')
      expect(await issuer.issuer.reload()).toBe(true)

      const failures: string[] = []
      const seen: string[] = []
      const end = Date.now() + AHEAD_SECONDS * 1000 + POLL_MS
      while (Date.now() < end) {
        const jwt = await token()
        const { alg } = decodeProtectedHeader(jwt)
        if (!seen.includes(alg ?? '')) seen.push(alg ?? '')
        for (const [index, verify] of verifiers.entries()) {
          await verify(jwt).catch((error: unknown) => {
            failures.push(`${index === 0 ? 'ours' : 'jose'} ${alg}: ${String(error)}`)
          })
        }
      }
      expect(failures).toEqual([])
      expect(seen).toEqual(AHEAD_SECONDS === 0 ? ['RS256'] : ['HS256', 'RS256'])
      // The HS256 token from before the switch is still active at the issuer.
      const introspected = await send(issuer.url, {
        method: 'POST',
        path: '/introspect',
        host: HOST,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(APP.id, APP.secret),
        },
        body: new URLSearchParams({ token: hs256 }).toString(),
      })
      expect(introspected.json).toMatchObject({ active: true })
    })
  })

  describe('a tenant RS256 from its first key', () => {
    let issuer: InProcessIssuer
    beforeAll(async () => {
      issuer = await startIssuer({
        databaseUrl: `sqlite:${join(tmp.dir, 'forgery.db')}`,
        config: join(FIXTURES, 'oidc'),
      })
    })
    afterAll(async () => {
      await issuer?.close()
    })

    it('refuses an HS256 token forged with JWT_SECRET and dated before its first key', async () => {
      const iat = Math.floor(Date.now() / 1000) - 60
      const forged = await new SignJWT({
        client_id: OIDC_RS.a.id,
        scope: 'openid profile email',
        jti: randomUUID(),
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(OIDC_RS.issuer)
        .setSubject('user-alice')
        .setAudience(OIDC_RS.audience)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .sign(secretKey)
      // The tenant's first key is made now, a minute after the forged `iat`.
      const jwks = await send(issuer.url, { path: '/.well-known/jwks.json', host: OIDC_RS.host })
      expect((jwks.json as { keys: unknown[] }).keys).toHaveLength(1)

      const introspected = await send(issuer.url, {
        method: 'POST',
        path: '/introspect',
        host: OIDC_RS.host,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(OIDC_RS.a.id, OIDC_RS.a.secret!),
        },
        body: new URLSearchParams({ token: forged }).toString(),
      })
      expect(introspected.status).toBe(200)
      expect(introspected.json).toEqual({ active: false })

      const userinfo = await send(issuer.url, {
        path: '/userinfo',
        host: OIDC_RS.host,
        headers: { authorization: `Bearer ${forged}` },
      })
      expect(userinfo.status).toBe(401)
      expect(userinfo.text).not.toContain('user-alice')
    })
  })
})
