import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { basicAuth, postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { pkce, readLoginPage, submitLogin } from '../support/oauth.js'

// Resource indicators (RFC 8707) over HTTP against an issuer on SQLite.
const HOST = 'mcp.test'
const CB = 'http://localhost:9000/cb'
const MCP = 'https://mcp.example.test/mcp'
const API = 'https://api.example.test'
const APP = '0b000000-0000-4000-8000-000000000001'
const SERVICE = { id: '0b000000-0000-4000-8000-000000000002', secret: 'service-secret-0123' }

interface Tokens {
  access_token: string
  refresh_token?: string
  scope: string
}

describe('resource indicators (RFC 8707)', () => {
  const issuer = useIssuer({ config: 'resources' })

  function authorize(resources: string[], scope: string, challenge: string) {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: APP,
      redirect_uri: CB,
      scope,
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    for (const resource of resources) query.append('resource', resource)
    return send(issuer.url, { path: `/authorize?${query.toString()}`, host: HOST })
  }

  /** authorize → login → code, with `resources` named at /authorize. */
  async function signIn(resources: string[], scope = 'tools:read tools:call orders:read') {
    const { verifier, challenge } = pkce()
    const page = readLoginPage(await authorize(resources, scope, challenge))
    const res = await submitLogin(
      issuer.url,
      HOST,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
    const code = new URL(res.headers.location!).searchParams.get('code')!
    return { code, verifier }
  }

  function token(params: Record<string, string>, resources: string[] = []) {
    const body = new URLSearchParams(params)
    for (const resource of resources) body.append('resource', resource)
    return send(issuer.url, {
      method: 'POST',
      path: '/token',
      host: HOST,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    })
  }

  function redeem(code: string, verifier: string, resources: string[] = []) {
    return token(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CB,
        code_verifier: verifier,
        client_id: APP,
      },
      resources,
    )
  }

  const tokens = (res: HttpResponse): Tokens => res.json as Tokens
  const aud = (res: HttpResponse): unknown => decodeJwt(tokens(res).access_token).aud

  function service(params: Record<string, string>): Promise<HttpResponse> {
    return postForm(issuer.url, HOST, params, {
      authorization: basicAuth(SERVICE.id, SERVICE.secret),
    })
  }

  it('gives a code with PKCE a token for the resource named, its scope narrowed', async () => {
    const { code, verifier } = await signIn(['HTTPS://MCP.example.test:443/mcp'])
    const res = await redeem(code, verifier, [MCP])
    expect(res.status).toBe(200)
    expect(tokens(res).scope).toBe('tools:read tools:call')
    const claims = decodeJwt(tokens(res).access_token)
    expect(claims).toMatchObject({ aud: MCP, scope: 'tools:read tools:call' })
  })

  it("gives the sign-in's only resource when /token names none", async () => {
    const { code, verifier } = await signIn([API])
    const res = await redeem(code, verifier)
    expect(res.status).toBe(200)
    expect(aud(res)).toBe(API)
    expect(tokens(res).scope).toBe('tools:read tools:call orders:read')
  })

  it('gives the tenant audience when the sign-in named none or several and /token none', async () => {
    const several = await signIn([MCP, API])
    const res = await redeem(several.code, several.verifier)
    expect(res.status).toBe(200)
    // The tenant sets no audience: it is the issuer URL.
    const claims = decodeJwt(tokens(res).access_token)
    expect(claims.aud).toBe(claims.iss)
    expect(tokens(res).scope).toBe('tools:read tools:call orders:read')
  })

  it('sends an unknown resource at /authorize back as an error redirect, before any sign-in', async () => {
    const res = await authorize(
      [MCP, 'https://unknown.example.test/'],
      'tools:read',
      pkce().challenge,
    )
    expect(res.status).toBe(303)
    const location = new URL(res.headers.location!)
    expect(`${location.origin}${location.pathname}`).toBe(CB)
    expect(location.searchParams.get('error')).toBe('invalid_target')
    expect(location.searchParams.get('state')).toBe('st')
    expect(res.headers['set-cookie'] ?? []).not.toContainEqual(
      expect.stringMatching(/^tessera_login=/),
    )
  })

  it('answers an unknown resource, or two, at /token with 400 invalid_target', async () => {
    const { code, verifier } = await signIn([MCP, API])
    const unknown = await redeem(code, verifier, ['https://unknown.example.test/'])
    expect(unknown.status).toBe(400)
    expect(unknown.json).toMatchObject({ error: 'invalid_target' })
    const two = await redeem(code, verifier, [MCP, API])
    expect(two.status).toBe(400)
    expect(two.json).toMatchObject({ error: 'invalid_target' })
    // Neither spent the code.
    const ok = await redeem(code, verifier, [API])
    expect(ok.status).toBe(200)
    expect(aud(ok)).toBe(API)
  })

  it("keeps refreshes to the sign-in's resources", async () => {
    const { code, verifier } = await signIn([MCP])
    const first = await redeem(code, verifier)
    expect(first.status).toBe(200)
    const refresh = (refreshToken: string, resources: string[] = []) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: APP }, resources)
    const other = await refresh(tokens(first).refresh_token!, [API])
    expect(other.status).toBe(400)
    expect(other.json).toMatchObject({ error: 'invalid_target' })
    // The refused request left the token unspent.
    const named = await refresh(tokens(first).refresh_token!, [MCP])
    expect(named.status).toBe(200)
    expect(aud(named)).toBe(MCP)
    expect(tokens(named).scope).toBe('tools:read tools:call')
    const implied = await refresh(tokens(named).refresh_token!)
    expect(implied.status).toBe(200)
    expect(aud(implied)).toBe(MCP)
  })

  it('gives client_credentials and password tokens for the resource named', async () => {
    const credentials = await service({ grant_type: 'client_credentials', resource: MCP })
    expect(credentials.status).toBe(200)
    expect(aud(credentials)).toBe(MCP)
    expect(tokens(credentials).scope).toBe('tools:read')
    const password = await service({
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      scope: 'orders:read',
      resource: API,
    })
    expect(password.status).toBe(200)
    expect(aud(password)).toBe(API)
    expect(tokens(password).scope).toBe('orders:read')
    const unknown = await service({ grant_type: 'client_credentials', resource: 'urn:nope' })
    expect(unknown.status).toBe(400)
    expect(unknown.json).toMatchObject({ error: 'invalid_target' })
  })

  it("answers invalid_scope when nothing of the request is the resource's", async () => {
    const res = await service({
      grant_type: 'client_credentials',
      scope: 'orders:read',
      resource: MCP,
    })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'invalid_scope' })
  })

  it('shows the resource as aud at introspection', async () => {
    const credentials = await service({ grant_type: 'client_credentials', resource: MCP })
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: HOST,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(SERVICE.id, SERVICE.secret),
      },
      body: new URLSearchParams({ token: tokens(credentials).access_token }).toString(),
    })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ active: true, aud: MCP, scope: 'tools:read' })
  })
})
