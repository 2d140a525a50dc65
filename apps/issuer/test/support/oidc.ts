import { createHash } from 'node:crypto'
import { expect } from 'vitest'
import { postForm, send } from './http.js'
import type { HttpResponse } from './http.js'
import { pkce, readLoginPage, submitLogin } from './oauth.js'

/** One client of the `oidc` fixture. */
export interface OidcClient {
  id: string
  /** Confidential clients only. */
  secret?: string
  redirectUri: string
  postLogoutRedirectUris: string[]
}

/** One tenant of the `oidc` fixture: clients A (confidential), B (public) and one without openid. */
export interface OidcTenant {
  name: 'rs' | 'hs'
  host: string
  issuer: string
  audience: string
  a: OidcClient
  b: OidcClient
  plain: OidcClient
}

function tenant(name: 'rs' | 'hs', digit: string): OidcTenant {
  const suffix = `-${digit.repeat(4)}-4${digit.repeat(3)}-8${digit.repeat(3)}-${digit.repeat(12)}`
  return {
    name,
    host: `${name}.oidc.test`,
    issuer: `http://${name}.oidc.test`,
    audience: 'https://api.oidc.test',
    a: {
      id: `aaaaaaaa${suffix}`,
      secret: `${name}-a-secret-01234`,
      redirectUri: 'http://localhost:9000/a/cb',
      postLogoutRedirectUris: [
        'http://localhost:9000/a/signed-out',
        'http://localhost:9000/a/bye?from=tessera',
      ],
    },
    b: {
      id: `bbbbbbbb${suffix}`,
      redirectUri: 'http://localhost:9000/b/cb',
      postLogoutRedirectUris: ['http://localhost:9000/b/signed-out'],
    },
    plain: {
      id: `cccccccc${suffix}`,
      redirectUri: 'http://localhost:9000/c/cb',
      postLogoutRedirectUris: [],
    },
  }
}

/** The fixture's RS256 tenant. */
export const OIDC_RS = tenant('rs', '1')
/** The fixture's HS256 tenant: HS256 access tokens, RS256 ID tokens. */
export const OIDC_HS = tenant('hs', '2')

/** What the fixture's provider answers for alice; `department` is released by no scope. */
export const ALICE = {
  sub: 'user-alice',
  profile: {
    name: 'Alice Liddell',
    given_name: 'Alice',
    family_name: 'Liddell',
    preferred_username: 'alice',
  },
  email: { email: 'alice@example.test', email_verified: true },
  department: 'Looking-Glass Research',
}

/** The `at_hash` of an RS256 ID token for `accessToken` (OIDC Core §3.1.3.6). */
export function atHash(accessToken: string): string {
  return createHash('sha256')
    .update(accessToken, 'ascii')
    .digest()
    .subarray(0, 16)
    .toString('base64url')
}

/**
 * The cookies a browser would keep for the issuer: every `Set-Cookie` of the responses it is
 * given, `Max-Age=0` deleting. Paths and domains are not modelled: all cookies of the tests are
 * the issuer's own.
 */
export class CookieJar {
  readonly #cookies = new Map<string, string>()

  get(name: string): string | undefined {
    return this.#cookies.get(name)
  }

  set(name: string, value: string): void {
    this.#cookies.set(name, value)
  }

  delete(name: string): void {
    this.#cookies.delete(name)
  }

  header(): string | undefined {
    if (this.#cookies.size === 0) return undefined
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  take(response: HttpResponse): void {
    for (const line of response.headers['set-cookie'] ?? []) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const gone = attributes.some((attribute) => /^max-age=0$/i.test(attribute))
      if (gone) this.#cookies.delete(name)
      else this.#cookies.set(name, pair.slice(eq + 1))
    }
  }
}

/** The `Set-Cookie` line of `name` in `response`, or undefined. */
export function setCookie(response: HttpResponse, name: string): string | undefined {
  return response.headers['set-cookie']?.find((line) => line.startsWith(`${name}=`))
}

/** GET (or `method`) a URL of a tenant, as a browser with `jar` would, over the loopback. */
export async function visit(
  baseUrl: string,
  url: URL | string,
  jar: CookieJar,
  method = 'GET',
): Promise<HttpResponse> {
  const target = new URL(url)
  const cookie = jar.header()
  const response = await send(baseUrl, {
    method,
    path: target.pathname + target.search,
    host: target.host,
    headers: cookie === undefined ? {} : { cookie },
  })
  jar.take(response)
  return response
}

/**
 * Opens `authorizeUrl`, expects the login form, signs in as `username` and returns the 303
 * response (its Location is the client's redirect).
 */
export async function signInWithForm(
  baseUrl: string,
  authorizeUrl: URL,
  jar: CookieJar,
  username = 'alice',
): Promise<HttpResponse> {
  const page = await visit(baseUrl, authorizeUrl, jar)
  expect(page.status).toBe(200)
  const { csrfToken } = readLoginPage(page)
  const login = await submitLogin(
    baseUrl,
    authorizeUrl.host,
    { csrf_token: csrfToken, username, password: `${username}-password` },
    jar.header(),
  )
  jar.take(login)
  expect(login.status).toBe(303)
  return login
}

/** The Location of a 303 as a URL (the client's redirect_uri with its parameters). */
export function redirectOf(response: HttpResponse): URL {
  expect(response.status).toBe(303)
  return new URL(response.headers.location!)
}

/** A token response of the issuer, as the OpenID tests read it. */
export interface TokenResponse {
  access_token: string
  token_type: string
  expires_in: number
  scope: string
  refresh_token?: string
  id_token?: string
}

/** The /authorize URL of an OpenID request of `app` (PKCE, state); `params` add or replace. */
export function openIdAuthorizeUrl(
  tenant: OidcTenant,
  app: OidcClient,
  challenge: string,
  params: Record<string, string> = {},
): URL {
  const url = new URL(`${tenant.issuer}/authorize`)
  const all: Record<string, string> = {
    response_type: 'code',
    client_id: app.id,
    redirect_uri: app.redirectUri,
    scope: 'openid profile email',
    state: 'oidc-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  }
  for (const [name, value] of Object.entries(all)) url.searchParams.set(name, value)
  return url
}

/** Redeems `code` at /token for `app` (its secret in the body when it has one). */
export async function redeemCode(
  baseUrl: string,
  tenant: OidcTenant,
  app: OidcClient,
  code: string,
  verifier: string,
): Promise<TokenResponse> {
  const res = await postForm(baseUrl, tenant.host, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: app.redirectUri,
    code_verifier: verifier,
    client_id: app.id,
    ...(app.secret === undefined ? {} : { client_secret: app.secret }),
  })
  expect(res.status, res.text).toBe(200)
  return res.json as TokenResponse
}

/**
 * Signs `username` in to `app` through the form in the browser `jar` and redeems the code:
 * the tokens, and the jar now holding the session cookie.
 */
export async function signInOpenId(
  baseUrl: string,
  tenant: OidcTenant,
  app: OidcClient,
  options: { jar?: CookieJar; params?: Record<string, string>; username?: string } = {},
): Promise<{ tokens: TokenResponse; jar: CookieJar }> {
  const jar = options.jar ?? new CookieJar()
  const { verifier, challenge } = pkce()
  const url = openIdAuthorizeUrl(tenant, app, challenge, options.params)
  const login = await signInWithForm(baseUrl, url, jar, options.username)
  const code = redirectOf(login).searchParams.get('code')
  if (code === null) throw new Error(`no code in ${login.headers.location}`)
  return { tokens: await redeemCode(baseUrl, tenant, app, code, verifier), jar }
}

/**
 * What prompt=none answers for the browser `jar` at `app`: the code when its session is live,
 * else the error.
 */
export async function silentAuthorize(
  baseUrl: string,
  tenant: OidcTenant,
  app: OidcClient,
  jar: CookieJar,
): Promise<{ code: string | null; error: string | null }> {
  const url = openIdAuthorizeUrl(tenant, app, pkce().challenge, {
    prompt: 'none',
    nonce: 'silent-nonce',
  })
  const location = redirectOf(await visit(baseUrl, url, jar))
  return { code: location.searchParams.get('code'), error: location.searchParams.get('error') }
}
