/**
 * Failed client authentications counted once for two issuers (replicas) sharing a PostgreSQL
 * database.
 */
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientKey } from '../support/client-assertion.js'
import { CA, statuses, withSecret, writeClientAuthConfig } from '../support/client-auth.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

describe('client authentication throttling on two replicas sharing PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let tmp: ReturnType<typeof tempDir>
  let a: InProcessIssuer
  let b: InProcessIssuer

  beforeAll(async () => {
    database = await createTestDatabase()
    tmp = tempDir()
    const config = writeClientAuthConfig(tmp.dir, await clientKey('ES256', 'ca-1'))
    const options = { databaseUrl: database.url, config, vars: { TRUST_PROXY: '1' } }
    a = await startIssuer(options)
    b = await startIssuer(options)
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
    tmp?.remove()
  })

  it('shares one count: 10 failures at each replica, then both refuse', async () => {
    const address = '203.0.113.1'
    const failures = await Promise.all(
      [...Array(20).keys()].map((n) =>
        withSecret(n % 2 === 0 ? a.url : b.url, 'token', CA.client, `guess-${n}`, address),
      ),
    )
    expect(statuses(failures)).toEqual({ 401: 20 })
    for (const replica of [a, b]) {
      const refused = await withSecret(replica.url, 'revoke', CA.client, CA.secret, address)
      expect(refused.status).toBe(429)
      expect(refused.headers['retry-after']).toBeDefined()
    }
    expect((await withSecret(b.url, 'token', CA.client, CA.secret, '203.0.113.2')).status).toBe(200)
  })

  it('lets exactly 20 of 80 parallel wrong guesses split over both reach the secret check', async () => {
    const address = '203.0.113.3'
    const answers = await Promise.all(
      [...Array(80).keys()].map((n) =>
        withSecret(n % 2 === 0 ? a.url : b.url, 'token', CA.client, `guess-${n}`, address),
      ),
    )
    expect(statuses(answers)).toEqual({ 401: 20, 429: 60 })
  })
})
