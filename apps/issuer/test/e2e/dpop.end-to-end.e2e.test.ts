/**
 * DPoP from the token request to the API: oauth4webapi gets bound tokens from the issuer and
 * calls an API protected by @tessera/verifier (Koa, on loopback) with them.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DP, DPN } from '../support/dpop.js'
import {
  callApi,
  challengeOf,
  clientOptions,
  discover,
  refreshWithDpop,
  signInWithDpop,
  startDpopApi,
} from '../support/dpop-client.js'
import type { DpopApi } from '../support/dpop-client.js'
import { basicAuth, send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'

describe('DPoP end to end: oauth4webapi, the issuer and a verifier-protected API', () => {
  const issuer = useIssuer({ config: 'dpop' })
  let api: DpopApi

  beforeAll(async () => {
    api = await startDpopApi([DP.issuer, DPN.issuer])
  })
  afterAll(async () => {
    await api?.close()
  })

  /** A fresh ES256 key, a code + PKCE sign-in bound to it: the tokens and the handle. */
  async function boundSession(tenant: { issuer: string; host: string }, clientId: string) {
    const as = await discover(issuer.url, tenant.issuer)
    const client: oauth.Client = { client_id: clientId }
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'))
    const { tokens, retried } = await signInWithDpop(issuer.url, as, client, DPoP, tenant.host)
    return { as, client, DPoP, tokens, retried }
  }

  it('accepts the bound token with a proof of its key, and refuses it as Bearer', async () => {
    const { DPoP, tokens } = await boundSession(DP, DP.spa)
    expect(tokens.token_type).toBe('dpop')
    const jkt = await DPoP.calculateThumbprint()

    const ok = await callApi(api, '/orders', tokens.access_token, DPoP)
    expect(ok).toBeInstanceOf(Response)
    expect(await (ok as Response).json()).toEqual({ sub: 'user-alice', jkt })
    const strict = (await callApi(api, '/strict/orders', tokens.access_token, DPoP)) as Response
    expect(strict.status).toBe(200)

    const asBearer = challengeOf(await callApi(api, '/orders', tokens.access_token))
    expect(asBearer).toMatchObject({ status: 401, scheme: 'dpop', error: 'invalid_token' })
    expect(asBearer.header).toMatch(/^DPoP realm="api", error="invalid_token"/)
  })

  it('refuses a proof sent twice, and a proof signed by another key', async () => {
    const { DPoP, tokens } = await boundSession(DP, DP.spa)
    let headers: Record<string, string> = {}
    const first = await callApi(api, '/orders', tokens.access_token, DPoP, (sent) => {
      headers = sent
    })
    expect((first as Response).status).toBe(200)
    expect(headers.authorization).toBe(`DPoP ${tokens.access_token}`)
    expect(headers.dpop).toBeDefined()

    // The very same request again: the proof's jti is spent.
    const replay = await fetch(new URL('/orders', api.url), { headers })
    expect(replay.status).toBe(401)
    expect(replay.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof"/)

    const client: oauth.Client = { client_id: DP.spa }
    const thief = oauth.DPoP(client, await oauth.generateKeyPair('ES256'))
    const stolen = challengeOf(await callApi(api, '/orders', tokens.access_token, thief))
    expect(stolen).toMatchObject({ status: 401, scheme: 'dpop', error: 'invalid_dpop_proof' })
  })

  it('refreshes with the bound key; the new token works with it at the API', async () => {
    const { as, client, DPoP, tokens } = await boundSession(DP, DP.spa)
    const refreshed = await refreshWithDpop(issuer.url, as, client, DPoP, tokens.refresh_token!)
    expect(refreshed.token_type).toBe('dpop')
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    const jkt = await DPoP.calculateThumbprint()
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt })
    const ok = (await callApi(api, '/strict/orders', refreshed.access_token, DPoP)) as Response
    expect(await ok.json()).toEqual({ sub: 'user-alice', jkt })
  })

  it('retries the token request after use_dpop_nonce, and the token works at the API', async () => {
    const { as, client, DPoP, tokens, retried } = await boundSession(DPN, DPN.spa)
    // The first attempt carried no nonce: the issuer answered use_dpop_nonce, the code unspent.
    expect(retried).toBe(true)
    expect(tokens.token_type).toBe('dpop')
    const ok = (await callApi(api, '/orders', tokens.access_token, DPoP)) as Response
    expect(ok.status).toBe(200)
    // The handle now holds the tenant's nonce: the refresh goes through at the first attempt.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
        ...clientOptions(issuer.url),
        DPoP,
      }),
    )
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({
      jkt: await DPoP.calculateThumbprint(),
    })
  })

  it('takes an unbound token as Bearer until the API requires DPoP', async () => {
    const as = await discover(issuer.url, DP.issuer)
    const client: oauth.Client = { client_id: DP.service.id }
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(DP.service.secret),
        { scope: 'read' },
        clientOptions(issuer.url),
      ),
    )
    expect(tokens.token_type).toBe('bearer')
    expect(decodeJwt(tokens.access_token).cnf).toBeUndefined()

    // Accepting both: the unbound token works as Bearer.
    const ok = (await callApi(api, '/orders', tokens.access_token)) as Response
    expect(await ok.json()).toEqual({ sub: DP.service.id, jkt: null })
    // Requiring DPoP: refused with a DPoP challenge and no Bearer one.
    const refused = challengeOf(await callApi(api, '/strict/orders', tokens.access_token))
    expect(refused).toMatchObject({ status: 401, scheme: 'dpop', error: 'invalid_token' })
    expect(refused.header).not.toMatch(/Bearer/)
    expect(refused.header).toMatch(/algs="ES256 RS256 PS256 EdDSA"/)
  })

  it('takes an Ed25519 key, which oauth4webapi signs as alg Ed25519, at the issuer and the API', async () => {
    const as = await discover(issuer.url, DP.issuer)
    const client: oauth.Client = { client_id: DP.spa }
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('Ed25519'))
    let proof = ''
    const { tokens } = await signInWithDpop(issuer.url, as, client, DPoP, DP.host)
    const jkt = await DPoP.calculateThumbprint()
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt })
    const ok = await callApi(api, '/strict/orders', tokens.access_token, DPoP, (sent) => {
      proof = sent.dpop!
    })
    expect(decodeProtectedHeader(proof).alg).toBe('Ed25519')
    expect(await (ok as Response).json()).toEqual({ sub: 'user-alice', jkt })
  })

  it('introspects the bound token as token_type DPoP with its cnf', async () => {
    const { DPoP, tokens } = await boundSession(DP, DP.spa)
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: DP.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(DP.service.id, DP.service.secret),
      },
      body: new URLSearchParams({ token: tokens.access_token }).toString(),
    })
    expect(res.json).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: await DPoP.calculateThumbprint() },
    })
  })
})
