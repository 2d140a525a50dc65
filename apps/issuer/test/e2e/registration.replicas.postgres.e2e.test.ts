/**
 * Dynamic client registration on two issuers (replicas) sharing a PostgreSQL database: a client
 * registered at one is known, managed and deleted at the other.
 */
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basicAuth } from '../support/http.js'
import { startIssuer } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import {
  GATED,
  manage,
  postEndpoint,
  REG,
  register,
  REGISTRATION_VARS,
} from '../support/registration.js'
import type { Registered } from '../support/registration.js'

const CB = 'https://app.example.com/callback'

describe('dynamic client registration on two replicas sharing PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let a: InProcessIssuer
  let b: InProcessIssuer

  beforeAll(async () => {
    database = await createTestDatabase()
    const options = { databaseUrl: database.url, config: 'registration', vars: REGISTRATION_VARS }
    a = await startIssuer(options)
    b = await startIssuer(options)
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
  })

  const introspect = (url: string, client: Registered) =>
    postEndpoint(
      url,
      REG.host,
      '/introspect',
      { token: 'x' },
      {
        authorization: basicAuth(client.client_id, client.client_secret!),
      },
    )

  it('registers at A, reads, uses and deletes at B; the client is gone at A', async () => {
    const res = await register(a.url, REG.host, { redirect_uris: [CB], client_name: 'Replicated' })
    expect(res.status).toBe(201)
    const client = res.json as Registered
    const token = client.registration_access_token

    const read = await manage(b.url, REG.host, 'GET', client.client_id, token)
    expect(read.status).toBe(200)
    expect(read.json).toMatchObject({ client_id: client.client_id, client_name: 'Replicated' })
    expect((await introspect(b.url, client)).json).toEqual({ active: false })

    const put = await manage(b.url, REG.host, 'PUT', client.client_id, token, {
      client_id: client.client_id,
      redirect_uris: [CB],
      client_name: 'Renamed',
    })
    expect(put.status).toBe(200)
    expect((await manage(a.url, REG.host, 'GET', client.client_id, token)).json).toMatchObject({
      client_name: 'Renamed',
    })

    expect((await manage(b.url, REG.host, 'DELETE', client.client_id, token)).status).toBe(204)
    expect((await manage(a.url, REG.host, 'GET', client.client_id, token)).status).toBe(401)
    expect((await introspect(a.url, client)).status).toBe(401)
  })

  it('holds max_registrations across both: 5 of 30 parallel registrations split over A and B', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        register(
          n % 2 === 0 ? a.url : b.url,
          GATED.host,
          { redirect_uris: [CB] },
          {
            token: GATED.token,
          },
        ),
      ),
    )
    const counts = answers.reduce<Record<number, number>>((all, { status }) => {
      all[status] = (all[status] ?? 0) + 1
      return all
    }, {})
    expect(counts).toEqual({ 201: 5, 400: 25 })
  })

  it('counts one address once for both replicas', async () => {
    const address = '203.0.113.77'
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        register(n % 2 === 0 ? a.url : b.url, REG.host, { redirect_uris: [CB] }, { address }),
      ),
    )
    expect(answers.filter((res) => res.status === 201)).toHaveLength(20)
    expect(answers.filter((res) => res.status === 429)).toHaveLength(10)
  })
})
