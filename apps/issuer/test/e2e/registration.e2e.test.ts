import { describe, expect, it } from 'vitest'
import { basicAuth, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { authorizePath, pkce } from '../support/oauth.js'
import {
  CLOSED,
  manage,
  postEndpoint,
  REG,
  register,
  REGISTRATION_VARS,
} from '../support/registration.js'
import type { Registered } from '../support/registration.js'

// Dynamic client registration (RFC 7591) and its management (RFC 7592) over HTTP, on SQLite.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CB = 'https://app.example.com/callback'
const NATIVE = 'http://127.0.0.1/callback'

describe('dynamic client registration', () => {
  const issuer = useIssuer({ config: 'registration', vars: REGISTRATION_VARS })

  async function registered(body: Record<string, unknown>): Promise<Registered> {
    const res = await register(issuer.url, REG.host, body)
    expect(res.status, res.text).toBe(201)
    return res.json as Registered
  }

  const introspect = (client: Registered, auth: 'basic' | 'post', secret = client.client_secret!) =>
    postEndpoint(
      issuer.url,
      REG.host,
      '/introspect',
      {
        token: 'not-a-token',
        ...(auth === 'post' ? { client_id: client.client_id, client_secret: secret } : {}),
      },
      auth === 'basic' ? { authorization: basicAuth(client.client_id, secret) } : {},
    )

  describe('POST /register', () => {
    it('registers a confidential client: 201, its secret and tokens once, never cached', async () => {
      const res = await register(issuer.url, REG.host, {
        redirect_uris: [CB],
        client_name: 'Example app',
        software_id: 'example-app',
        logo_uri: 'https://app.example.com/logo.png',
        unknown_field: { nested: true },
      })
      expect(res.status).toBe(201)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      const client = res.json as Registered
      expect(client).toEqual({
        client_id: expect.stringMatching(UUID) as unknown,
        client_id_issued_at: expect.any(Number) as unknown,
        client_secret: expect.stringMatching(/^[\w-]{43}$/) as unknown,
        client_secret_expires_at: 0,
        registration_access_token: expect.stringMatching(/^[\w-]{43}$/) as unknown,
        registration_client_uri: `${REG.issuer}/register/${client.client_id}`,
        redirect_uris: [CB],
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        scope: 'tools:read tools:call',
        client_name: 'Example app',
        software_id: 'example-app',
      })
      expect(Math.abs(client.client_id_issued_at - Date.now() / 1000)).toBeLessThan(60)
    })

    it('registers a public client without a secret', async () => {
      const client = await registered({
        redirect_uris: [NATIVE, 'com.example.app:/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'tools:call admin',
      })
      expect(client).not.toHaveProperty('client_secret')
      expect(client).toMatchObject({
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'tools:call',
      })
    })

    it.each([
      [
        'http to a host that is not loopback',
        { redirect_uris: ['http://app.example.com/cb'] },
        'invalid_redirect_uri',
        'redirect_uris[0]: http is allowed only for a loopback address',
      ],
      [
        'a javascript: URI',
        { redirect_uris: ['javascript:alert(1)'] },
        'invalid_redirect_uri',
        'redirect_uris[0]: scheme "javascript:" is not allowed',
      ],
      [
        'a fragment',
        { redirect_uris: [`${CB}#frag`] },
        'invalid_redirect_uri',
        'redirect_uris[0]: must not contain a fragment (#)',
      ],
      [
        'no redirect URI',
        { client_name: 'x' },
        'invalid_redirect_uri',
        'redirect_uris is required',
      ],
      [
        'a string for redirect_uris',
        { redirect_uris: CB },
        'invalid_redirect_uri',
        'redirect_uris: must be an array of strings',
      ],
      [
        'client_credentials',
        { redirect_uris: [CB], grant_types: ['authorization_code', 'client_credentials'] },
        'invalid_client_metadata',
        'grant_types[1]: "client_credentials" is not allowed',
      ],
      [
        'the implicit grant',
        { redirect_uris: [CB], grant_types: ['implicit'], response_types: ['token'] },
        'invalid_client_metadata',
        'grant_types[0]: "implicit" is not allowed',
      ],
      [
        'private_key_jwt',
        { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt' },
        'invalid_client_metadata',
        'token_endpoint_auth_method: "private_key_jwt" is not supported',
      ],
      [
        'an array for client_name',
        { redirect_uris: [CB], client_name: ['a', 'b'] },
        'invalid_client_metadata',
        'client_name: must be a string',
      ],
      [
        'an array for scope',
        { redirect_uris: [CB], scope: ['tools:read'] },
        'invalid_client_metadata',
        'scope: must be a string',
      ],
      [
        'scopes the tenant does not allow',
        { redirect_uris: [CB], scope: 'admin' },
        'invalid_client_metadata',
        'this server allows tools:read tools:call',
      ],
      [
        'a JSON array',
        [{ redirect_uris: [CB] }],
        'invalid_client_metadata',
        'the request body must be a JSON object',
      ],
    ])('refuses %s', async (_name, body, error, description) => {
      const res = await register(issuer.url, REG.host, body)
      expect(res.status).toBe(400)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.json).toEqual({
        error,
        error_description: expect.stringContaining(description) as unknown,
      })
    })

    it.each([
      ['malformed JSON', { raw: '{"redirect_uris": [' }, 'the request body is not valid JSON'],
      [
        'a form body',
        { raw: `redirect_uris=${CB}`, contentType: 'application/x-www-form-urlencoded' },
        'must be application/json',
      ],
      [
        'a 100 KB body',
        { raw: JSON.stringify({ redirect_uris: [CB], client_name: 'x'.repeat(100_000) }) },
        'request body larger than',
      ],
    ])('refuses %s with 400 invalid_client_metadata', async (_name, options, description) => {
      const res = await register(issuer.url, REG.host, undefined, options)
      expect(res.status).toBe(400)
      expect(res.json).toEqual({
        error: 'invalid_client_metadata',
        error_description: expect.stringContaining(description) as unknown,
      })
    })
  })

  describe('metadata and tenants without registration', () => {
    it('names registration_endpoint in both documents of a tenant that registers', async () => {
      for (const path of [
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
      ]) {
        const reg = await send(issuer.url, { path, host: REG.host })
        expect(reg.json).toMatchObject({ registration_endpoint: `${REG.issuer}/register` })
        expect((reg.json as { scopes_supported: string[] }).scopes_supported).toEqual(
          expect.arrayContaining(['tools:read', 'tools:call']),
        )
        const closed = await send(issuer.url, { path, host: CLOSED.host })
        expect(closed.json).not.toHaveProperty('registration_endpoint')
      }
    })

    it('answers the registration paths of a tenant without registration as unknown paths', async () => {
      const unknown = await send(issuer.url, { path: '/nowhere', host: CLOSED.host })
      expect(unknown.status).toBe(404)
      const answers = await Promise.all([
        register(issuer.url, CLOSED.host, { redirect_uris: [CB] }),
        send(issuer.url, { path: '/register', host: CLOSED.host }),
        manage(issuer.url, CLOSED.host, 'GET', '0c000000-0000-4000-8000-000000000002', 'x'),
        manage(issuer.url, CLOSED.host, 'DELETE', '0c000000-0000-4000-8000-000000000002', 'x'),
      ])
      for (const res of answers) {
        expect(res.status).toBe(404)
        expect(res.json).toEqual(unknown.json)
      }
    })

    it('has no CORS on /register', async () => {
      const preflight = await send(issuer.url, {
        method: 'OPTIONS',
        path: '/register',
        host: REG.host,
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      })
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
    })
  })

  describe('the registration client URI (RFC 7592)', () => {
    it('reads, replaces and deletes a registration', async () => {
      const client = await registered({
        redirect_uris: [CB],
        client_name: 'Before',
        scope: 'tools:read',
      })
      const uri = new URL(client.registration_client_uri)
      expect(uri.pathname).toBe(`/register/${client.client_id}`)
      const token = client.registration_access_token

      const read = await manage(issuer.url, REG.host, 'GET', client.client_id, token)
      expect(read.status).toBe(200)
      expect(read.headers['cache-control']).toBe('no-store')
      const withoutSecret: Partial<Registered> = { ...client }
      delete withoutSecret.client_secret
      delete withoutSecret.client_secret_expires_at
      expect(read.json).toEqual(withoutSecret)

      const put = await manage(issuer.url, REG.host, 'PUT', client.client_id, token, {
        client_id: client.client_id,
        client_secret: client.client_secret,
        redirect_uris: [CB, NATIVE],
        token_endpoint_auth_method: 'client_secret_post',
      })
      expect(put.status, put.text).toBe(200)
      // Fields left out are removed: client_name is gone, the scope back to its default.
      const unnamed = { ...withoutSecret }
      delete unnamed.client_name
      expect(put.json).toEqual({
        ...unnamed,
        redirect_uris: [CB, NATIVE],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'tools:read tools:call',
      })
      // The secret stays; the method is now the body's.
      expect((await introspect(client, 'post')).status).toBe(200)
      expect((await introspect(client, 'basic')).status).toBe(401)

      const deleted = await manage(issuer.url, REG.host, 'DELETE', client.client_id, token)
      expect(deleted.status).toBe(204)
      expect(deleted.text).toBe('')
      expect((await manage(issuer.url, REG.host, 'GET', client.client_id, token)).status).toBe(401)
      expect((await introspect(client, 'post')).json).toMatchObject({ error: 'invalid_client' })
    })

    it('refuses a PUT that names another client_id or a secret of its own, changing nothing', async () => {
      const client = await registered({ redirect_uris: [CB] })
      const token = client.registration_access_token
      const puts = await Promise.all([
        manage(issuer.url, REG.host, 'PUT', client.client_id, token, { redirect_uris: [CB] }),
        manage(issuer.url, REG.host, 'PUT', client.client_id, token, {
          client_id: client.client_id,
          client_secret: 'a-secret-of-my-own-choice',
          redirect_uris: [CB],
        }),
        manage(issuer.url, REG.host, 'PUT', client.client_id, token, {
          client_id: client.client_id,
          redirect_uris: ['http://evil.example/cb'],
        }),
      ])
      expect(puts.map((res) => [res.status, (res.json as { error: string }).error])).toEqual([
        [400, 'invalid_client_metadata'],
        [400, 'invalid_client_metadata'],
        [400, 'invalid_redirect_uri'],
      ])
      const read = await manage(issuer.url, REG.host, 'GET', client.client_id, token)
      expect(read.json).toMatchObject({ redirect_uris: [CB] })
    })

    it('answers 401 invalid_token with a Bearer challenge for any token but the client’s own', async () => {
      const [client, other] = await Promise.all([
        registered({ redirect_uris: [CB] }),
        registered({ redirect_uris: [CB] }),
      ])
      const attempts = await Promise.all([
        manage(issuer.url, REG.host, 'GET', client.client_id, undefined),
        manage(issuer.url, REG.host, 'GET', client.client_id, 'wrong-token'),
        manage(issuer.url, REG.host, 'GET', client.client_id, other.registration_access_token),
        manage(issuer.url, REG.host, 'DELETE', client.client_id, other.registration_access_token),
        manage(issuer.url, REG.host, 'PUT', client.client_id, 'wrong', {
          client_id: client.client_id,
        }),
        manage(
          issuer.url,
          REG.host,
          'GET',
          '0c000000-0000-4000-8000-00000000ffff',
          client.registration_access_token,
        ),
        manage(issuer.url, REG.host, 'GET', 'not-a-uuid', client.registration_access_token),
        manage(issuer.url, REG.host, 'GET', REG.listedClient, client.registration_access_token),
      ])
      for (const res of attempts) {
        expect(res.status).toBe(401)
        expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/)
        expect(res.headers['cache-control']).toBe('no-store')
        expect((res.json as { error: string }).error).toBe('invalid_token')
      }
      // The client is still there.
      const read = await manage(
        issuer.url,
        REG.host,
        'GET',
        client.client_id,
        client.registration_access_token,
      )
      expect(read.status).toBe(200)
    })
  })

  describe('a registered client at the other endpoints', () => {
    it('authenticates with its secret at /introspect, /revoke and /token', async () => {
      const client = await registered({
        redirect_uris: [CB],
        grant_types: ['authorization_code', 'refresh_token'],
      })
      const ok = await introspect(client, 'basic')
      expect([ok.status, ok.json]).toEqual([200, { active: false }])
      expect((await introspect(client, 'basic', 'wrong-secret-0123456789')).status).toBe(401)
      const auth = { authorization: basicAuth(client.client_id, client.client_secret!) }
      const revoke = await postEndpoint(issuer.url, REG.host, '/revoke', { token: 'x' }, auth)
      expect(revoke.status).toBe(200)
      const refresh = await postEndpoint(
        issuer.url,
        REG.host,
        '/token',
        { grant_type: 'refresh_token', refresh_token: 'x' },
        auth,
      )
      expect([refresh.status, (refresh.json as { error: string }).error]).toEqual([
        400,
        'invalid_grant',
      ])
      const credentials = await postEndpoint(
        issuer.url,
        REG.host,
        '/token',
        { grant_type: 'client_credentials' },
        auth,
      )
      expect([credentials.status, (credentials.json as { error: string }).error]).toEqual([
        400,
        'unauthorized_client',
      ])
    })

    it('lets a public client present its client_id alone, and never introspect', async () => {
      const client = await registered({
        redirect_uris: [NATIVE],
        token_endpoint_auth_method: 'none',
      })
      const revoke = await postEndpoint(issuer.url, REG.host, '/revoke', {
        token: 'x',
        client_id: client.client_id,
      })
      expect(revoke.status).toBe(200)
      const withSecret = await postEndpoint(issuer.url, REG.host, '/revoke', {
        token: 'x',
        client_id: client.client_id,
        client_secret: 'guess-0123456789',
      })
      expect(withSecret.status).toBe(401)
      const inspect = await postEndpoint(issuer.url, REG.host, '/introspect', {
        token: 'x',
        client_id: client.client_id,
      })
      expect(inspect.status).toBe(401)
    })

    it('starts a sign-in at /authorize with PKCE, at its loopback redirect URI on any port', async () => {
      const client = await registered({
        redirect_uris: [NATIVE],
        token_endpoint_auth_method: 'none',
      })
      const authorize = (params: Record<string, string>): Promise<HttpResponse> =>
        send(issuer.url, {
          path: authorizePath({
            response_type: 'code',
            client_id: client.client_id,
            state: 's',
            scope: 'tools:read',
            ...params,
          }),
          host: REG.host,
        })
      const { challenge } = pkce()
      const page = await authorize({
        redirect_uri: 'http://127.0.0.1:51234/callback',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })
      expect(page.status).toBe(200)
      expect(page.text).toContain('name="csrf_token"')
      const noPkce = await authorize({ redirect_uri: NATIVE })
      expect(noPkce.status).toBe(303)
      expect(new URL(noPkce.headers.location!).searchParams.get('error')).toBe('invalid_request')
      const elsewhere = await authorize({
        redirect_uri: 'https://evil.example/cb',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })
      expect(elsewhere.status).toBe(400)
    })

    it('keeps the listed client of the tenant working beside the registered ones', async () => {
      const res = await postEndpoint(
        issuer.url,
        REG.host,
        '/token',
        { grant_type: 'client_credentials' },
        {
          authorization: basicAuth(REG.listedClient, REG.listedSecret),
        },
      )
      expect(res.status).toBe(200)
    })
  })
})
