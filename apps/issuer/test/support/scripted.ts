import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { postForm } from './http.js'
import type { HttpResponse } from './http.js'
import { FIXTURES, HS } from './issuer.js'
import { openLogin, SPA, submitLogin } from './oauth.js'
import type { LoginPage } from './oauth.js'

/**
 * The fixture whose provider does what the password asks (fixtures/scripted/providers/
 * scripted.mjs): `<username>-password` is right, `hang:…` never answers, `throw:…` throws, …
 */
export const SCRIPTED_CONFIG = join(FIXTURES, 'scripted')
export const SCRIPTED_PROVIDER = join(SCRIPTED_CONFIG, 'providers', 'scripted.mjs')

/** What reached the provider, one `[username, outcome]` per call, from PROVIDER_CALLS_FILE. */
export function providerCalls(file: string, username?: string): [string, string][] {
  if (!existsSync(file)) return []
  const calls = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t') as [string, string])
  return username === undefined ? calls : calls.filter(([name]) => name === username)
}

/** A password-grant request of the scripted tenant's confidential client. */
export function passwordGrant(
  url: string,
  username: string,
  password: string,
): Promise<HttpResponse> {
  return postForm(url, HS.host, {
    grant_type: 'password',
    username,
    password,
    client_id: HS.client,
    client_secret: HS.secret,
  })
}

/** The login form of the scripted tenant's SPA, as a browser would get it. */
export function openScriptedLogin(url: string): Promise<LoginPage> {
  return openLogin(url, HS.host, {
    response_type: 'code',
    client_id: SPA.clientId,
    redirect_uri: SPA.redirectUri,
    state: 'xyz',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  })
}

/** Posts `page`'s form with these credentials. */
export function postLogin(
  url: string,
  page: LoginPage,
  username: string,
  password: string,
): Promise<HttpResponse> {
  return submitLogin(url, HS.host, { csrf_token: page.csrfToken, username, password }, page.cookie)
}

/** A random integer in [min, max). */
export function randomBetween(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min))
}
