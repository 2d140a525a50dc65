import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send } from '../support/http.js'
import { HS, RS, startIssuer, tempDir } from '../support/issuer.js'

describe('GET /.well-known/jwks.json and metadata', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('publishes one RS256 public key per RS256 tenant and keeps it across a same-day restart', async () => {
    const databaseUrl = `sqlite:${tmp.dir}/tessera.db`
    const morning = Date.UTC(2026, 10, 22, 8)
    const issuer = await startIssuer({ databaseUrl, clock: () => morning })
    const before = await send(issuer.url, { path: '/.well-known/jwks.json', host: RS.host })
    const hsKeys = await send(issuer.url, { path: '/.well-known/jwks.json', host: HS.host })

    expect(before.status).toBe(200)
    expect(before.headers['content-type']).toContain('application/jwk-set+json')
    const { keys } = before.json as { keys: Record<string, string>[] }
    expect(keys).toHaveLength(1)
    expect(Object.keys(keys[0]!).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: '2026-11-22' })
    expect(Buffer.from(keys[0]!.n!, 'base64url').length * 8).toBe(2048)
    expect(hsKeys.json).toEqual({ keys: [] })

    await issuer.restart({ clock: () => morning + 8 * 3_600_000 })
    const after = await send(issuer.url, { path: '/.well-known/jwks.json', host: RS.host })
    await issuer.close()
    expect(after.text).toBe(before.text)
  })

  it('serves RFC 8414 metadata with the tenant issuer URL', async () => {
    const issuer = await startIssuer({ databaseUrl: 'memory:' })
    try {
      const res = await send(issuer.url, {
        path: '/.well-known/oauth-authorization-server',
        host: 'alias.hs.test:8443',
      })
      expect(res.status).toBe(200)
      expect(res.json).toEqual({
        issuer: HS.issuer,
        authorization_endpoint: `${HS.issuer}/authorize`,
        token_endpoint: `${HS.issuer}/token`,
        jwks_uri: `${HS.issuer}/.well-known/jwks.json`,
        revocation_endpoint: `${HS.issuer}/revoke`,
        introspection_endpoint: `${HS.issuer}/introspect`,
        userinfo_endpoint: `${HS.issuer}/userinfo`,
        end_session_endpoint: `${HS.issuer}/logout`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: [
          'authorization_code',
          'refresh_token',
          'password',
          'client_credentials',
        ],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
          'none',
        ],
        token_endpoint_auth_signing_alg_values_supported: ['RS256', 'ES256', 'PS256'],
        revocation_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
          'none',
        ],
        revocation_endpoint_auth_signing_alg_values_supported: ['RS256', 'ES256', 'PS256'],
        introspection_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
        ],
        introspection_endpoint_auth_signing_alg_values_supported: ['RS256', 'ES256', 'PS256'],
        scopes_supported: ['read', 'write'],
        authorization_response_iss_parameter_supported: true,
        dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      })
    } finally {
      await issuer.close()
    }
  })

  it('answers /healthz and /readyz on any host, and /metrics on none', async () => {
    const issuer = await startIssuer({ databaseUrl: 'memory:' })
    try {
      expect((await send(issuer.url, { path: '/healthz', host: 'whatever' })).json).toEqual({
        status: 'ok',
      })
      expect((await send(issuer.url, { path: '/readyz', host: 'whatever' })).json).toEqual({
        status: 'ready',
      })
      // Metrics name every tenant: they are served on the admin listener only.
      for (const host of ['whatever', HS.host]) {
        const metrics = await send(issuer.url, { path: '/metrics', host })
        expect(metrics.status).toBe(404)
        expect(metrics.text).not.toContain('tessera_')
      }
    } finally {
      await issuer.close()
    }
  })

  it('reports not ready once the store stops answering', async () => {
    const tmp2 = tempDir()
    const issuer = await startIssuer({ databaseUrl: `sqlite:${tmp2.dir}/t.db` })
    try {
      await issuer.issuer.store.close()
      const res = await send(issuer.url, { path: '/readyz', host: 'any' })
      expect(res.status).toBe(503)
      expect(res.json).toEqual({ status: 'not ready', reason: 'store unavailable' })
    } finally {
      await issuer.close().catch(() => undefined)
      tmp2.remove()
    }
  })
})
