import { createHash, randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { send } from './http.js'
import type { HttpResponse } from './http.js'

export const SPA = {
  clientId: '22222222-2222-4222-8222-222222222222',
  redirectUri: 'http://localhost:9000/cb',
}
export const SECOND_APP = '55555555-5555-4555-8555-555555555555'

/** A fresh PKCE pair (RFC 7636 §4.1–4.2). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export function authorizePath(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) query.set(name, value)
  return `/authorize?${query.toString()}`
}

/** The login form as a browser would see it: its CSRF token and the binding cookie. */
export interface LoginPage {
  response: HttpResponse
  csrfToken: string
  cookie: string
}

export function readLoginPage(response: HttpResponse): LoginPage {
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(response.text)?.[1]
  const setCookie = response.headers['set-cookie']?.find((c) => c.startsWith('tessera_login='))
  if (csrf === undefined || setCookie === undefined) {
    throw new Error(`not a login page (${response.status}): ${response.text.slice(0, 200)}`)
  }
  return { response, csrfToken: csrf, cookie: setCookie.split(';', 1)[0]! }
}

export async function openLogin(
  baseUrl: string,
  host: string,
  params: Record<string, string | undefined>,
  cookie?: string,
): Promise<LoginPage> {
  const response = await send(baseUrl, {
    path: authorizePath(params),
    host,
    headers: cookie === undefined ? {} : { cookie },
  })
  expect(response.status).toBe(200)
  return readLoginPage(response)
}

export function submitLogin(
  baseUrl: string,
  host: string,
  fields: Record<string, string>,
  cookie: string | undefined,
): Promise<HttpResponse> {
  return send(baseUrl, {
    method: 'POST',
    path: '/authorize',
    host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie === undefined ? {} : { cookie }),
    },
    body: new URLSearchParams(fields).toString(),
  })
}

/** Runs authorize → login and returns the code from the 303 Location. */
export async function signIn(
  baseUrl: string,
  host: string,
  options: {
    clientId?: string
    redirectUri?: string
    scope?: string
    state?: string
    challenge?: string
    username?: string
    password?: string
  } = {},
): Promise<{ code: string; location: URL }> {
  const page = await openLogin(baseUrl, host, {
    response_type: 'code',
    client_id: options.clientId ?? SPA.clientId,
    redirect_uri: options.redirectUri ?? SPA.redirectUri,
    scope: options.scope,
    state: options.state ?? 'xyz',
    code_challenge: options.challenge,
    code_challenge_method: options.challenge === undefined ? undefined : 'S256',
  })
  const res = await submitLogin(
    baseUrl,
    host,
    {
      csrf_token: page.csrfToken,
      username: options.username ?? 'alice',
      password: options.password ?? 'alice-password',
    },
    page.cookie,
  )
  expect(res.status).toBe(303)
  const location = new URL(res.headers.location!)
  const code = location.searchParams.get('code')
  if (code === null) throw new Error(`no code in ${location.href}`)
  return { code, location }
}
