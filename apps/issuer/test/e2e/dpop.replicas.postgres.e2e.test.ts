/**
 * DPoP on two issuers (replicas) sharing a PostgreSQL database: a proof is single use across
 * both, and a server nonce one gave is accepted by the other; oauth4webapi's tokens from one
 * work at a verifier-protected API and refresh at the other.
 */
import { createTestDatabase } from '@tessera/test-support'
import { decodeJwt } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DP, DPN, dpopKey } from '../support/dpop.js'
import {
  callApi,
  clientOptions,
  discover,
  refreshWithDpop,
  signInWithDpop,
  startDpopApi,
} from '../support/dpop-client.js'
import type { DpopApi } from '../support/dpop-client.js'
import { basicAuth, postForm } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { startIssuer } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { pkce, signIn } from '../support/oauth.js'

describe('DPoP on two replicas sharing PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let a: InProcessIssuer
  let b: InProcessIssuer
  let api: DpopApi

  beforeAll(async () => {
    database = await createTestDatabase()
    const options = { databaseUrl: database.url, config: 'dpop' }
    a = await startIssuer(options)
    b = await startIssuer(options)
    api = await startDpopApi([DP.issuer, DPN.issuer])
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), api?.close()])
    await database?.drop()
  })

  function clientCredentials(
    at: InProcessIssuer,
    host: string,
    client: { id: string; secret: string },
    dpop: string,
  ): Promise<HttpResponse> {
    return postForm(
      at.url,
      host,
      { grant_type: 'client_credentials' },
      { authorization: basicAuth(client.id, client.secret), dpop },
    )
  }

  it('refuses at one replica a proof used at the other', async () => {
    const proof = await (await dpopKey()).proof()
    expect((await clientCredentials(a, DP.host, DP.service, proof)).status).toBe(200)
    const replay = await clientCredentials(b, DP.host, DP.service, proof)
    expect(replay.status).toBe(400)
    expect(replay.json).toMatchObject({ error: 'invalid_dpop_proof' })
  })

  it('of concurrent uses of one proof at both replicas, exactly one succeeds', async () => {
    const proof = await (await dpopKey()).proof()
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        clientCredentials(n % 2 === 0 ? a : b, DP.host, DP.service, proof),
      ),
    )
    expect(results.filter((res) => res.status === 200)).toHaveLength(1)
  })

  it('accepts at one replica the nonce the other gave', async () => {
    const key = await dpopKey()
    const htu = `${DPN.issuer}/token`
    const asked = await clientCredentials(a, DPN.host, DPN.service, await key.proof({ htu }))
    expect(asked.json).toMatchObject({ error: 'use_dpop_nonce' })
    const nonce = asked.headers['dpop-nonce'] as string
    const res = await clientCredentials(b, DPN.host, DPN.service, await key.proof({ htu, nonce }))
    expect(res.status).toBe(200)
    expect(res.headers['dpop-nonce']).toBe(nonce)
  })

  it("keeps a public client's refresh token bound to its key at the other replica", async () => {
    const key = await dpopKey()
    const { verifier, challenge } = pkce()
    const { code } = await signIn(a.url, DP.host, { clientId: DP.spa, challenge, scope: 'read' })
    const redeemed = await postForm(
      a.url,
      DP.host,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: DP.redirectUri,
        code_verifier: verifier,
        client_id: DP.spa,
      },
      { dpop: await key.proof() },
    )
    expect(redeemed.status).toBe(200)
    const token = (redeemed.json as { refresh_token: string }).refresh_token
    const refresh = async (with_: typeof key) =>
      postForm(
        b.url,
        DP.host,
        { grant_type: 'refresh_token', refresh_token: token, client_id: DP.spa },
        { dpop: await with_.proof() },
      )
    expect((await refresh(await dpopKey())).json).toMatchObject({ error: 'invalid_grant' })
    expect((await refresh(key)).status).toBe(200)
  })

  it('takes oauth4webapi tokens from one replica to the API, and refreshes them at the other', async () => {
    const client: oauth.Client = { client_id: DPN.spa }
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'))
    const jkt = await DPoP.calculateThumbprint()
    const atA = await discover(a.url, DPN.issuer)
    const { tokens, retried } = await signInWithDpop(a.url, atA, client, DPoP, DPN.host)
    expect(retried).toBe(true)
    const ok = (await callApi(api, '/strict/orders', tokens.access_token, DPoP)) as Response
    expect(await ok.json()).toEqual({ sub: 'user-alice', jkt })

    // At B, with the nonce A gave (the handle keeps it): no use_dpop_nonce, no retry.
    const atB = await discover(b.url, DPN.issuer)
    const refreshed = await oauth.processRefreshTokenResponse(
      atB,
      client,
      await oauth.refreshTokenGrantRequest(atB, client, oauth.None(), tokens.refresh_token!, {
        ...clientOptions(b.url),
        DPoP,
      }),
    )
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt })
    const again = (await callApi(api, '/strict/orders', refreshed.access_token, DPoP)) as Response
    expect(again.status).toBe(200)

    // The rotated refresh token is still bound to the key at A (a thief's handle gets a nonce
    // first, then the refusal).
    const thief = oauth.DPoP(client, await oauth.generateKeyPair('ES256'))
    await expect(
      refreshWithDpop(a.url, atA, client, thief, refreshed.refresh_token!),
    ).rejects.toMatchObject({ error: 'invalid_grant' })
  })
})
