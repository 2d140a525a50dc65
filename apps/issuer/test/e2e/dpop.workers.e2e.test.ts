/**
 * DPoP on `tessera start --workers 2` (one SQLite file): a proof is single use whichever worker
 * receives it, a nonce one worker gave is good at the other, and oauth4webapi's whole flow
 * works with its requests on fresh connections (each worker takes some), up to a verifier-protected API.
 */
import { randomBytes } from 'node:crypto'
import { decodeJwt } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DP, DPN, dpopKey } from '../support/dpop.js'
import {
  callApi,
  discover,
  refreshWithDpop,
  signInWithDpop,
  startDpopApi,
} from '../support/dpop-client.js'
import type { DpopApi } from '../support/dpop-client.js'
import { basicAuth, postForm } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { workerPids } from '../support/workers.js'

// `tessera start` names its tenants with https://, whatever the listener (TLS ends at a proxy).
const DPS = { ...DP, issuer: 'https://dp.test' }
const DPNS = { ...DPN, issuer: 'https://dpn.test' }

describe('DPoP on tessera start --workers 2', { timeout: 120_000 }, () => {
  const cli = useIssuer({
    command: 'start',
    config: 'dpop',
    workers: 2,
    vars: { KEY_ENCRYPTION_SECRET: randomBytes(32).toString('base64url') },
  })
  let api: DpopApi

  beforeAll(async () => {
    api = await startDpopApi([DPS.issuer, DPNS.issuer])
  })
  afterAll(async () => {
    await api?.close()
  })

  function clientCredentials(
    host: string,
    client: { id: string; secret: string },
    dpop: string,
  ): Promise<HttpResponse> {
    return postForm(
      cli.url,
      host,
      { grant_type: 'client_credentials' },
      { authorization: basicAuth(client.id, client.secret), dpop },
    )
  }

  /** The workers (pid:slot) that logged a /token request among the lines from `from` on. */
  function tokenWorkers(from: number): Set<string> {
    const pids = new Set<string>()
    for (const entry of cli.entries().slice(from)) {
      if (entry.msg === 'request' && entry.path === '/token') {
        pids.add(`${entry.pid as number}:${entry.worker as number}`)
      }
    }
    return pids
  }

  /** Each request is logged by the worker that served it, by the end of that turn. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 100))

  it('of one token-request proof sent at once to both workers, exactly one succeeds', async () => {
    expect(workerPids(cli).size).toBe(2)
    // Until a burst reached both workers (the kernel picks the worker of each connection).
    for (let burst = 0; burst < 5; burst++) {
      const from = cli.entries().length
      const proof = await (await dpopKey()).proof({ htu: `${DPS.issuer}/token` })
      const results = await Promise.all(
        Array.from({ length: 8 }, () => clientCredentials(DP.host, DP.service, proof)),
      )
      expect(results.filter((res) => res.status === 200)).toHaveLength(1)
      for (const res of results.filter((r) => r.status !== 200)) {
        expect(res.status).toBe(400)
        expect(res.json).toMatchObject({ error: 'invalid_dpop_proof' })
      }
      await settle()
      if (tokenWorkers(from).size === 2) return
    }
    throw new Error('no burst reached both workers')
  })

  it('accepts at the other worker the nonce a worker gave', async () => {
    const key = await dpopKey()
    const htu = `${DPNS.issuer}/token`
    const before = cli.entries().length
    const asked = await clientCredentials(DPN.host, DPN.service, await key.proof({ htu }))
    expect(asked.json).toMatchObject({ error: 'use_dpop_nonce' })
    const nonce = asked.headers['dpop-nonce'] as string
    await settle()
    const [giver] = [...tokenWorkers(before)]
    expect(giver).toBeDefined()
    // Batches of fresh connections until the other worker has served one: all accepted.
    for (let batch = 0; batch < 10; batch++) {
      const from = cli.entries().length
      const results = await Promise.all(
        Array.from({ length: 6 }, async () =>
          clientCredentials(DPN.host, DPN.service, await key.proof({ htu, nonce })),
        ),
      )
      expect(results.map((res) => res.status)).toEqual(Array<number>(6).fill(200))
      await settle()
      if ([...tokenWorkers(from)].some((worker) => worker !== giver)) return
    }
    throw new Error('no batch reached the other worker')
  })

  it('runs the oauth4webapi flow, nonce retry and refresh included, up to the API', async () => {
    const as = await discover(cli.url, DPNS.issuer)
    const client: oauth.Client = { client_id: DPN.spa }
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'))
    const jkt = await DPoP.calculateThumbprint()
    const { tokens, retried } = await signInWithDpop(cli.url, as, client, DPoP, DPN.host)
    expect(retried).toBe(true)
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt })
    let refresh = tokens.refresh_token!
    for (let n = 0; n < 4; n++) {
      const refreshed = await refreshWithDpop(cli.url, as, client, DPoP, refresh)
      expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt })
      refresh = refreshed.refresh_token!
      const ok = (await callApi(api, '/strict/orders', refreshed.access_token, DPoP)) as Response
      expect(await ok.json()).toEqual({ sub: 'user-alice', jkt })
    }
  })
})
