import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { writeConfig } from './client-assertion.js'
import { json } from './client-documents.js'
import type { DocumentServer } from './client-documents.js'
import { send } from './http.js'
import type { HttpResponse } from './http.js'
import { readLoginPage, submitLogin } from './oauth.js'
import { visit } from './oidc.js'
import type { CookieJar } from './oidc.js'

/** The tenant of the consent tests: one listed client, registration and metadata documents on. */
export const CONSENT = {
  host: 'consent.test',
  issuer: 'http://consent.test',
  resource: 'https://mcp.consent.test/mcp',
  /** A client the tenant file lists: trusted, never asked about. */
  listed: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
}

/** The consent tenant with every client sending the user back to `redirectUri`. */
export interface ConsentTenant {
  redirectUri: string
  /** Writes the tenant's configuration into a folder of `dir`; answers its path. */
  writeConfig(dir: string): string
  /**
   * Serves a client ID metadata document at `path` of the http (loopback) server, named
   * `clientName`; answers its `client_id` (the document's URL).
   */
  serveClient(docs: DocumentServer, path: string, clientName: string): string
  /** The /authorize URL of `clientId`; `params` add or replace. */
  authorizeUrl(clientId: string, challenge: string, params?: Record<string, string>): URL
}

export function consentTenant(redirectUri: string): ConsentTenant {
  const tenants = `name: consent
config:
  hosts: [${CONSENT.host}]
  jwt_algorithm: RS256
  providers: [providers/users.mjs]
  resources:
    - uri: ${CONSENT.resource}
  clients:
    - client_id: ${CONSENT.listed}
      client_name: Listed App
      grant_types: [authorization_code, refresh_token]
      redirect_uris: [${redirectUri}]
      scopes: [openid, tools:read, tools:call]
  dynamic_clients:
    registration: true
    metadata_documents: true
    scopes: [openid, tools:read, tools:call]
`
  return {
    redirectUri,
    writeConfig(dir) {
      const config = join(dir, 'config')
      mkdirSync(config, { recursive: true })
      return writeConfig(config, tenants)
    },
    serveClient(docs, path, clientName) {
      docs.routes.set(path, (base) =>
        json({
          client_id: `${base}${path}`,
          client_name: clientName,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
        }),
      )
      return `${docs.http}${path}`
    },
    authorizeUrl(clientId, challenge, params = {}) {
      const url = new URL(`${CONSENT.issuer}/authorize`)
      const all: Record<string, string> = {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'openid tools:read',
        resource: CONSENT.resource,
        state: 'consent-state',
        nonce: 'consent-nonce',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...params,
      }
      for (const [name, value] of Object.entries(all)) url.searchParams.set(name, value)
      return url
    },
  }
}

/** The `csrf_token` of a page's form (login, "Continue as …" or consent). */
export function csrfOf(page: HttpResponse): string {
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1]
  if (csrf === undefined) throw new Error(`no form (${page.status}): ${page.text.slice(0, 200)}`)
  return csrf
}

export function isConsentPage(page: HttpResponse): boolean {
  return page.status === 200 && page.text.includes('value="allow">Allow</button>')
}

/**
 * Opens the login form of `url` at the issuer `baseUrl` in the browser `jar` and signs alice
 * in: the page or redirect that follows (its cookies taken into `jar`).
 */
export async function signInAlice(
  baseUrl: string,
  url: URL,
  jar: CookieJar,
): Promise<HttpResponse> {
  const login = readLoginPage(await visit(baseUrl, url, jar))
  const response = await submitLogin(
    baseUrl,
    CONSENT.host,
    { csrf_token: login.csrfToken, username: 'alice', password: 'alice-password' },
    jar.header(),
  )
  jar.take(response)
  return response
}

/** Posts a consent form: its token, the button pressed (if any) and the browser's cookies. */
export function postConsent(
  baseUrl: string,
  csrf: string,
  decision: string | undefined,
  cookie: string | undefined,
): Promise<HttpResponse> {
  return send(baseUrl, {
    method: 'POST',
    path: '/authorize',
    host: CONSENT.host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie === undefined ? {} : { cookie }),
    },
    body: new URLSearchParams({
      csrf_token: csrf,
      ...(decision === undefined ? {} : { decision }),
    }).toString(),
  })
}
