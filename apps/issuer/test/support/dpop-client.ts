/**
 * A DPoP client driven by oauth4webapi and an API protected by @tessera/verifier: the two ends
 * of a sender-constrained token, for tests that run them against a real issuer.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Router from '@koa/router'
import { createVerifier } from '@tessera/verifier'
import type { DpopReplayCache } from '@tessera/verifier'
import { bearer } from '@tessera/verifier/koa'
import Koa from 'koa'
import * as oauth from 'oauth4webapi'
import { expect } from 'vitest'
import { DP } from './dpop.js'
import { loopbackFetch } from './fetch.js'
import { send } from './http.js'
import { JWT_SECRET } from './issuer.js'
import { readLoginPage, submitLogin } from './oauth.js'

/** oauth4webapi's options to reach the tenants of an issuer listening at `issuerUrl`. */
export function clientOptions(issuerUrl: string) {
  return {
    [oauth.customFetch]: loopbackFetch(issuerUrl),
    // The test tenants' issuer URLs are http:// (dev mode); production is https.
    [oauth.allowInsecureRequests]: true,
  }
}

/** The tenant `tenantIssuer`'s metadata, from the issuer listening at `issuerUrl`. */
export async function discover(
  issuerUrl: string,
  tenantIssuer: string,
): Promise<oauth.AuthorizationServer> {
  const url = new URL(tenantIssuer)
  return oauth.processDiscoveryResponse(
    url,
    await oauth.discoveryRequest(url, { ...clientOptions(issuerUrl), algorithm: 'oidc' }),
  )
}

/**
 * Runs one token request the way oauth4webapi documents it for server nonces: once, and once
 * more when the answer is `use_dpop_nonce` (the DPoP handle keeps the nonce it was given).
 * Resolves to the tokens and whether a retry was needed.
 */
export async function withNonceRetry<T>(
  attempt: () => Promise<T>,
): Promise<{ result: T; retried: boolean }> {
  try {
    return { result: await attempt(), retried: false }
  } catch (error) {
    if (!oauth.isDPoPNonceError(error)) throw error
    return { result: await attempt(), retried: true }
  }
}

/** A public client's sign-in: authorize with PKCE and `dpop_jkt`, the login form, the code. */
export async function signInWithDpop(
  issuerUrl: string,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  DPoP: oauth.DPoPHandle,
  host: string,
): Promise<{ tokens: oauth.TokenEndpointResponse; retried: boolean }> {
  const codeVerifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: DP.redirectUri,
    response_type: 'code',
    scope: 'read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    dpop_jkt: await DPoP.calculateThumbprint(),
  }).toString()
  const page = readLoginPage(await send(issuerUrl, { path: url.pathname + url.search, host }))
  const login = await submitLogin(
    issuerUrl,
    host,
    { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
    page.cookie,
  )
  expect(login.status).toBe(303)
  const callback = oauth.validateAuthResponse(as, client, new URL(login.headers.location!), state)
  const { result, retried } = await withNonceRetry(async () =>
    oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        callback,
        DP.redirectUri,
        codeVerifier,
        { ...clientOptions(issuerUrl), DPoP },
      ),
    ),
  )
  return { tokens: result, retried }
}

/** A public client's refresh with its DPoP key (and a nonce retry when the tenant asks one). */
export async function refreshWithDpop(
  issuerUrl: string,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  DPoP: oauth.DPoPHandle,
  refreshToken: string,
): Promise<oauth.TokenEndpointResponse> {
  const { result } = await withNonceRetry(async () =>
    oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
        ...clientOptions(issuerUrl),
        DPoP,
      }),
    ),
  )
  return result
}

/** An API on loopback: GET /orders accepts Bearer and DPoP; GET /strict/orders DPoP only. */
export interface DpopApi {
  url: string
  close(): Promise<void>
}

/**
 * Starts a Koa API protected by @tessera/verifier with `dpop` on, accepting the HS256 tokens of
 * `issuers` (the test issuers sign with JWT_SECRET). Both routes answer
 * `{ sub, jkt, scheme }`. The two verifiers share one replay cache, as one API's would.
 */
export async function startDpopApi(
  issuers: string[],
  replayCache?: DpopReplayCache,
): Promise<DpopApi> {
  const common = { issuer: issuers, secret: JWT_SECRET }
  const lenient = createVerifier({ ...common, dpop: { replayCache } })
  const strict = createVerifier({ ...common, dpop: { required: true, replayCache } })
  const router = new Router()
  const answer = (ctx: Koa.Context) => {
    const { payload, jkt } = ctx.state.auth as { payload: { sub?: string }; jkt?: string }
    ctx.body = { sub: payload.sub, jkt: jkt ?? null }
  }
  router.get('/orders', bearer(lenient), answer)
  router.get('/strict/orders', bearer(strict), answer)
  const app = new Koa().use(router.routes())
  const handle = app.callback()
  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

/**
 * A GET of `path` at the API with oauth4webapi's protectedResourceRequest: the response when it
 * is not a challenge, the challenge error otherwise. `sent` receives the request's headers.
 */
export async function callApi(
  api: DpopApi,
  path: string,
  accessToken: string,
  DPoP?: oauth.DPoPHandle,
  sent?: (headers: Record<string, string>) => void,
): Promise<Response | oauth.WWWAuthenticateChallengeError> {
  const options = {
    [oauth.allowInsecureRequests]: true,
    [oauth.customFetch]: (
      url: string,
      init: oauth.CustomFetchOptions<string, oauth.ProtectedResourceRequestBody>,
    ) => {
      sent?.({ ...init.headers })
      return fetch(url, init)
    },
    ...(DPoP === undefined ? {} : { DPoP }),
  }
  try {
    return await oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL(path, api.url),
      new Headers(),
      null,
      options,
    )
  } catch (error) {
    if (error instanceof oauth.WWWAuthenticateChallengeError) return error
    throw error
  }
}

/** The first challenge of a refusal, as oauth4webapi parsed it, and the status. */
export function challengeOf(answer: Response | oauth.WWWAuthenticateChallengeError): {
  status: number
  scheme: string
  error?: string
  header: string
} {
  if (!(answer instanceof oauth.WWWAuthenticateChallengeError)) {
    throw new Error(`expected a challenge, got ${answer.status}`)
  }
  const [first] = answer.cause
  return {
    status: answer.status,
    scheme: first!.scheme,
    ...(first!.parameters.error === undefined ? {} : { error: first!.parameters.error }),
    header: answer.response.headers.get('www-authenticate') ?? '',
  }
}
