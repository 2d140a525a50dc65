import { decodeJwt } from 'jose'
import * as oauth from 'oauth4webapi'
import { describe, expect, it } from 'vitest'
import { DP, DPN } from '../support/dpop.js'
import { loopbackFetch } from '../support/fetch.js'
import { send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { readLoginPage, submitLogin } from '../support/oauth.js'

describe('DPoP, driven by oauth4webapi', () => {
  const issuer = useIssuer({ config: 'dpop' })

  function options() {
    return {
      [oauth.customFetch]: loopbackFetch(issuer.url),
      // The test tenants' issuer URLs are http:// (dev mode); production is https.
      [oauth.allowInsecureRequests]: true,
    }
  }

  async function discover(issuerUrl: string): Promise<oauth.AuthorizationServer> {
    const url = new URL(issuerUrl)
    return oauth.processDiscoveryResponse(
      url,
      await oauth.discoveryRequest(url, { ...options(), algorithm: 'oidc' }),
    )
  }

  /** authorize (with dpop_jkt) → login: the callback parameters. */
  async function authorize(
    as: oauth.AuthorizationServer,
    client: oauth.Client,
    host: string,
    codeVerifier: string,
    dpopJkt: string,
  ): Promise<URLSearchParams> {
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: DP.redirectUri,
      response_type: 'code',
      scope: 'openid read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      nonce: 'n-1',
      dpop_jkt: dpopJkt,
    }).toString()
    const page = readLoginPage(await send(issuer.url, { path: url.pathname + url.search, host }))
    const login = await submitLogin(
      issuer.url,
      host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(login.status).toBe(303)
    return oauth.validateAuthResponse(as, client, new URL(login.headers.location!), state)
  }

  it('code + PKCE bound with dpop_jkt → bound tokens → refresh → userinfo with DPoP', async () => {
    const as = await discover(DP.issuer)
    expect(as.dpop_signing_alg_values_supported).toContain('ES256')
    const client: oauth.Client = { client_id: DP.spa }
    const keyPair = await oauth.generateKeyPair('ES256')
    const DPoP = oauth.DPoP(client, keyPair)
    const codeVerifier = oauth.generateRandomCodeVerifier()
    const callback = await authorize(
      as,
      client,
      DP.host,
      codeVerifier,
      await DPoP.calculateThumbprint(),
    )

    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        callback,
        DP.redirectUri,
        codeVerifier,
        { ...options(), DPoP },
      ),
      { expectedNonce: 'n-1' },
    )
    expect(tokens.token_type).toBe('dpop')
    const jkt = await DPoP.calculateThumbprint()
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt })

    // Refresh with the same key; the bound refresh token refuses another one.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
        ...options(),
        DPoP,
      }),
    )
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt })
    const stranger = oauth.DPoP(client, await oauth.generateKeyPair('ES256'))
    await expect(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, {
          ...options(),
          DPoP: stranger,
        }),
      ),
    ).rejects.toMatchObject({ error: 'invalid_grant' })

    const claims = await oauth.processUserInfoResponse(
      as,
      client,
      oauth.skipSubjectCheck,
      await oauth.userInfoRequest(as, client, refreshed.access_token, { ...options(), DPoP }),
    )
    expect(claims.sub).toBe('user-alice')
  })

  it('retries after use_dpop_nonce with the nonce the issuer gave, then keeps using it', async () => {
    const as = await discover(DPN.issuer)
    const client: oauth.Client = { client_id: DPN.service.id }
    // An RSA key: the Ed25519 and ES256 ones are in dpop.end-to-end.
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('PS256'))
    const auth = oauth.ClientSecretBasic(DPN.service.secret)
    const request = () =>
      oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        { scope: 'read' },
        {
          ...options(),
          DPoP,
        },
      )

    const first = oauth.processClientCredentialsResponse(as, client, await request())
    const error = await first.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toMatchObject({ error: 'use_dpop_nonce' })
    expect(oauth.isDPoPNonceError(error)).toBe(true)
    // The handle kept the DPoP-Nonce of the refusal: the retry carries it.
    const tokens = await oauth.processClientCredentialsResponse(as, client, await request())
    expect(tokens.token_type).toBe('dpop')
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() })
    const again = await oauth.processClientCredentialsResponse(as, client, await request())
    expect(again.token_type).toBe('dpop')
  })
})
