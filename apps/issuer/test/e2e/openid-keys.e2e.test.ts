import { join } from 'node:path'
import { createVerifier, VerifierError } from '@tessera/verifier'
import Database from 'better-sqlite3'
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT } from 'jose'
import type { JWK, JWTPayload } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_POLL_INTERVAL_MS } from '../../src/issuer.js'
import { ADMIN_TOKEN, createAdminClient, expectProblem } from '../support/admin-api.js'
import { eventually } from '../support/eventually.js'
import { basicAuth, postForm, send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess, InProcessIssuer } from '../support/issuer.js'

// An HS256 tenant with OpenID Connect clients keeps an RS256 key for its ID tokens.
// Its access tokens stay HS256, and an ID token is never taken for an access token.
const CONFIG = join(FIXTURES, 'openid')
const OIDC = {
  host: 'oidc.test',
  issuer: 'http://oidc.test',
  client: '0c000000-0000-4000-8000-000000000001',
  secret: 'oidc-app-secret-0',
}
const PLAIN = { host: 'plain.test', client: '0c000000-0000-4000-8000-000000000002' }
const NOT_AN_ACCESS_TOKEN = 'an ID token is not an access token'

interface Jwks {
  keys: { kid: string; kty: string; alg: string; use: string }[]
}

async function jwksOf(url: string, host: string): Promise<Jwks> {
  const res = await send(url, { path: '/.well-known/jwks.json', host })
  expect(res.status).toBe(200)
  return res.json as Jwks
}

async function passwordToken(url: string): Promise<string> {
  const res = await postForm(
    url,
    OIDC.host,
    { grant_type: 'password', username: 'alice', password: 'alice-password', scope: 'read' },
    { authorization: basicAuth(OIDC.client, OIDC.secret) },
  )
  expect(res.status).toBe(200)
  return (res.json as { access_token: string }).access_token
}

async function introspect(url: string, token: string): Promise<Record<string, unknown>> {
  const res = await send(url, {
    method: 'POST',
    path: '/introspect',
    host: OIDC.host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(OIDC.client, OIDC.secret),
    },
    body: new URLSearchParams({ token }).toString(),
  })
  expect(res.status).toBe(200)
  return res.json as Record<string, unknown>
}

describe('an HS256 tenant with OpenID Connect clients', { timeout: 120_000 }, () => {
  const tmp = tempDir()
  const file = join(tmp.dir, 'tessera.db')
  let issuer: InProcessIssuer
  beforeAll(async () => {
    issuer = await startIssuer({ databaseUrl: `sqlite:${file}`, config: CONFIG })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp.remove()
  })

  /** The tenant's active key as stored: dev keeps it as plaintext JWK JSON. */
  function storedActiveKey(): { kid: string; privateJwk: JWK } {
    const db = new Database(file, { readonly: true })
    try {
      const rows = db
        .prepare("SELECT kid, private_key FROM keys WHERE tenant = 'oidc' AND state = 'active'")
        .all() as { kid: string; private_key: string }[]
      expect(rows).toHaveLength(1)
      const [row] = rows
      return {
        kid: row!.kid,
        privateJwk: JSON.parse(row!.private_key) as JWK,
      }
    } finally {
      db.close()
    }
  }

  /** `payload` signed RS256 with the tenant's own ID-token key, read from the store. */
  async function signWithStoredKey(payload: JWTPayload): Promise<string> {
    const { kid, privateJwk } = storedActiveKey()
    const key = await importJWK(privateJwk, 'RS256')
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid }).sign(key)
  }

  /** @tessera/verifier as a resource server of the tenant would configure it. */
  function verifierFor(fetchJwks: boolean) {
    return createVerifier({
      issuer: OIDC.issuer,
      secret: JWT_SECRET,
      fetch: async (url) => {
        if (!fetchJwks) throw new Error(`no fetch expected, got ${url}`)
        const res = await send(issuer.url, { path: new URL(url).pathname, host: OIDC.host })
        return new Response(res.text, {
          status: res.status,
          headers: { 'content-type': 'application/json' },
        })
      },
    })
  }

  it('publishes one RS256 key; an HS256 tenant without them publishes none', async () => {
    const { keys } = await jwksOf(issuer.url, OIDC.host)
    expect(keys).toEqual([
      expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: storedActiveKey().kid }),
    ])
    expect(await jwksOf(issuer.url, PLAIN.host)).toEqual({ keys: [] })
  })

  it('gives the grants an ID-token signer of that key, and none to the other tenant', async () => {
    const oidc = issuer.issuer.registry.byHost(OIDC.host)
    const plain = issuer.issuer.registry.byHost(PLAIN.host)
    const signer = oidc?.context.idTokenSigner
    expect(signer?.alg).toBe('RS256')
    expect(oidc?.context.signer.alg).toBe('HS256')
    expect(plain?.context.idTokenSigner).toBeUndefined()
    const { token, kid } = await signer!.sign({ iss: OIDC.issuer, sub: 'alice' })
    expect(kid).toBe(storedActiveKey().kid)
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT', kid })
  })

  it('issues HS256 access tokens that a verifier with the secret alone accepts', async () => {
    const token = await passwordToken(issuer.url)
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' })
    const { payload } = await verifierFor(false).verify(token)
    expect(payload).toMatchObject({ iss: OIDC.issuer, sub: expect.any(String) as unknown })
    expect(await introspect(issuer.url, token)).toMatchObject({ active: true })
  })

  it('refuses an ID token signed by its key, at the verifier and at /introspect', async () => {
    const access = decodeJwt(await passwordToken(issuer.url))
    // The same claims, signed by the published key: an access token in all but the algorithm,
    // which both take (RS256 tokens verify against the JWKS). Only the ID-token claims differ.
    const control = await signWithStoredKey(access)
    const verifier = verifierFor(true)
    expect((await verifier.verify(control)).payload).toMatchObject({ jti: access.jti })
    expect(await introspect(issuer.url, control)).toMatchObject({ active: true })

    for (const extra of [
      { nonce: 'n-0S6_WzA2Mj' },
      { at_hash: '77QmUPtjPfzWtF2AnpK9RQ' },
      { azp: OIDC.client },
    ]) {
      const idToken = await signWithStoredKey({ ...access, ...extra })
      const error = await verifier.verify(idToken).then(
        () => undefined,
        (reason: unknown) => reason,
      )
      expect(error).toBeInstanceOf(VerifierError)
      expect(error).toMatchObject({ code: 'ERR_CLAIM_INVALID', message: NOT_AN_ACCESS_TOKEN })
      expect(await introspect(issuer.url, idToken)).toEqual({ active: false })
    }
  })
})

describe('rotating and revoking the ID-token key of an HS256 tenant', { timeout: 120_000 }, () => {
  const tmp = tempDir()
  const vars = {
    JWT_SECRET,
    TESSERA_CONFIG: CONFIG,
    DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
    ADMIN_TOKEN,
    // Rotated keys sign at once here; keys.publish-ahead.e2e.test.ts tests the wait.
    KEY_PUBLISH_AHEAD_SECONDS: '0',
  }
  let cli: IssuerProcess
  const { call } = createAdminClient(() => cli.admin)
  beforeAll(async () => {
    cli = await startIssuer({ command: 'dev', env: vars })
  })
  afterAll(async () => {
    await cli?.close()
    tmp.remove()
  })

  it('rotates through the admin API and the CLI; refuses a tenant without OpenID clients', async () => {
    const [first] = (await jwksOf(cli.url, OIDC.host)).keys.map((key) => key.kid)
    const rotated = await call('POST', '/admin/tenants/oidc/keys/rotate')
    expect(rotated.status).toBe(201)
    const second = (rotated.json as { kid: string; retired: { kid: string }[] }).kid
    expect(rotated.json).toMatchObject({ tenant: 'oidc', retired: [{ kid: first }] })
    await eventually(
      async () =>
        expect((await jwksOf(cli.url, OIDC.host)).keys.map((key) => key.kid)).toEqual([
          second,
          first,
        ]),
      { timeoutMs: KEY_POLL_INTERVAL_MS + 5_000, intervalMs: 200 },
    )
    expect(decodeProtectedHeader(await passwordToken(cli.url)).alg).toBe('HS256')

    const third = await runCli(['keys', 'rotate', '--tenant', 'oidc', '--dev'], vars)
    expect(third.stderr).toBe('')
    expect(third.status).toBe(0)

    const refused = expectProblem(
      await call('POST', '/admin/tenants/plain/keys/rotate'),
      409,
      'tag:tessera.dev,2026:problem:not-rs256',
    )
    expect(refused.detail).toBe(
      'tenant "plain" signs with HS256 and has no OpenID Connect clients, so it has no RS256 ' +
        'key to rotate (set jwt_algorithm: RS256 to switch it)',
    )
    const plainCli = await runCli(['keys', 'rotate', '--tenant', 'plain', '--dev'], vars)
    expect(plainCli.status).toBe(1)
    expect(plainCli.stderr).toBe(`tessera keys: ${String(refused.detail)}\n`)
    expect(await jwksOf(cli.url, PLAIN.host)).toEqual({ keys: [] })
  })

  it('replaces a revoked active ID-token key at once', async () => {
    const list = await call('GET', '/admin/tenants/oidc/keys')
    const active = (list.json as { keys: { kid: string; state: string }[] }).keys.filter(
      (key) => key.state === 'active',
    )
    expect(active).toHaveLength(1)
    const revoked = await call('POST', `/admin/tenants/oidc/keys/${active[0]!.kid}/revoke`)
    expect(revoked.status).toBe(200)
    const { newActiveKid } = revoked.json as { newActiveKid?: string }
    expect(newActiveKid).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/)
    await eventually(
      async () => {
        const kids = (await jwksOf(cli.url, OIDC.host)).keys.map((key) => key.kid)
        expect(kids[0]).toBe(newActiveKid)
        expect(kids).not.toContain(active[0]!.kid)
      },
      { timeoutMs: KEY_POLL_INTERVAL_MS + 5_000, intervalMs: 200 },
    )
  })
})
