import { describe, expect, it } from 'vitest'
import { basicAuth, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { authorizePath, pkce } from '../support/oauth.js'
import { postEndpoint, REG, register, REGISTRATION_VARS } from '../support/registration.js'
import type { Registered } from '../support/registration.js'

// Registered clients (RFC 7591) at /authorize, /token, /revoke and /introspect, on SQLite.
const CB = 'https://app.example.com/callback'
const NATIVE = 'http://127.0.0.1/callback'

describe('registered clients', () => {
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
