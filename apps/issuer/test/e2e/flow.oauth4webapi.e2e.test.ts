import * as oauth from 'oauth4webapi'
import { describe, expect, it } from 'vitest'
import { loopbackFetch } from '../support/fetch.js'
import { send } from '../support/http.js'
import { HS, useIssuer } from '../support/issuer.js'
import { readLoginPage, SPA, submitLogin } from '../support/oauth.js'

describe('the whole flow, driven by oauth4webapi', () => {
  const issuer = useIssuer()

  it('authorize → login → code → tokens → refresh twice → revoke → refresh fails', async () => {
    const options = {
      [oauth.customFetch]: loopbackFetch(issuer.url),
      // The test tenant's issuer URL is http://hs.test (dev mode); production is https.
      [oauth.allowInsecureRequests]: true,
    }
    const issuerUrl = new URL(HS.issuer)
    const as = await oauth.processDiscoveryResponse(
      issuerUrl,
      await oauth.discoveryRequest(issuerUrl, { ...options, algorithm: 'oauth2' }),
    )
    const client: oauth.Client = { client_id: SPA.clientId }
    const clientAuth = oauth.None()

    const codeVerifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const authorizationUrl = new URL(as.authorization_endpoint!)
    authorizationUrl.searchParams.set('client_id', client.client_id)
    authorizationUrl.searchParams.set('redirect_uri', SPA.redirectUri)
    authorizationUrl.searchParams.set('response_type', 'code')
    authorizationUrl.searchParams.set('scope', 'read')
    authorizationUrl.searchParams.set('state', state)
    authorizationUrl.searchParams.set(
      'code_challenge',
      await oauth.calculatePKCECodeChallenge(codeVerifier),
    )
    authorizationUrl.searchParams.set('code_challenge_method', 'S256')

    // The user's part: open the page, sign in (the browser test drives this in Chromium).
    const page = readLoginPage(
      await send(issuer.url, {
        path: authorizationUrl.pathname + authorizationUrl.search,
        host: authorizationUrl.host,
      }),
    )
    const login = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(login.status).toBe(303)

    // validateAuthResponse checks state and, since the metadata says so, iss (RFC 9207).
    const callback = oauth.validateAuthResponse(as, client, new URL(login.headers.location!), state)
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        callback,
        SPA.redirectUri,
        codeVerifier,
        options,
      ),
    )
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.scope).toBe('read')
    expect(tokens.refresh_token).toBeDefined()

    let refreshToken = tokens.refresh_token!
    for (let i = 0; i < 2; i++) {
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, options),
      )
      expect(refreshed.access_token).toBeDefined()
      expect(refreshed.refresh_token).not.toBe(refreshToken)
      refreshToken = refreshed.refresh_token!
    }

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, refreshToken, options),
    )

    const afterRevoke = oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, options),
    )
    await expect(afterRevoke).rejects.toMatchObject({ error: 'invalid_grant' })
  })
})
