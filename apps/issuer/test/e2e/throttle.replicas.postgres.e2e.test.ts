/**
 * Password throttling across two replicas on one PostgreSQL: real
 * `tessera dev` processes sharing a database created for this file, 100 requests in flight at
 * once, split between them.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postJson } from '../support/http.js'
import { HS, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import {
  openScriptedLogin,
  passwordGrant,
  postLogin,
  providerCalls,
  randomBetween,
  SCRIPTED_CONFIG,
} from '../support/scripted.js'

const MAX_FAILURES = 5
const PARALLEL = 100

describe('password throttling on two replicas sharing PostgreSQL', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let tmp: ReturnType<typeof tempDir>
  let calls: string
  let a: IssuerProcess
  let b: IssuerProcess

  beforeAll(async () => {
    database = await createTestDatabase()
    tmp = tempDir()
    calls = join(tmp.dir, 'calls.log')
    const vars = {
      JWT_SECRET,
      TESSERA_CONFIG: SCRIPTED_CONFIG,
      DATABASE_URL: database.url,
      PASSWORD_MAX_FAILURES: String(MAX_FAILURES),
      PASSWORD_MAX_FAILURES_PER_ADDRESS: '100000',
      // Both replicas append to one file: each line is one call, whichever process made it.
      PROVIDER_CALLS_FILE: calls,
    }
    a = await startIssuer({ command: 'dev', env: vars })
    b = await startIssuer({ command: 'dev', env: vars })
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
    tmp?.remove()
  })

  it('lets at most PASSWORD_MAX_FAILURES of 100 password grants split over both reach the provider', async () => {
    const right = randomBetween(50, PARALLEL)
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        passwordGrant(
          (i % 2 === 0 ? a : b).url,
          'alice',
          i === right ? 'alice-password' : `guess-${i}`,
        ),
      ),
    )
    const reached = providerCalls(calls, 'alice')
    expect(reached.length).toBeLessThanOrEqual(MAX_FAILURES)
    expect(reached.every(([, outcome]) => outcome !== 'right')).toBe(true)
    expect(responses.filter((r) => r.status === 400)).toHaveLength(reached.length)
    expect(responses.filter((r) => r.status === 429)).toHaveLength(PARALLEL - reached.length)
    expect(responses[right]!.status).toBe(429)
    expect(responses[right]!.json).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'too many failed sign-in attempts for this user; try again later',
    })

    // Another user is unaffected, at either replica.
    expect((await passwordGrant(a.url, 'bob', 'bob-password')).status).toBe(200)
    expect((await passwordGrant(b.url, 'bob', 'bob-password')).status).toBe(200)
  })

  it('lets at most PASSWORD_MAX_FAILURES of 100 login forms split over both reach the provider', async () => {
    const pages = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) => openScriptedLogin((i % 2 === 0 ? a : b).url)),
    )
    const right = randomBetween(50, PARALLEL)
    const responses = await Promise.all(
      pages.map((page, i) =>
        postLogin(
          (i % 2 === 0 ? a : b).url,
          page,
          'dave',
          i === right ? 'dave-password' : `guess-${i}`,
        ),
      ),
    )
    const reached = providerCalls(calls, 'dave')
    expect(reached.length).toBeLessThanOrEqual(MAX_FAILURES)
    expect(responses.filter((r) => r.status === 400)).toHaveLength(reached.length)
    expect(responses.filter((r) => r.status === 429)).toHaveLength(PARALLEL - reached.length)
    expect(responses[right]!.status).toBe(429)
  })

  it('answers 20 parallel password grants of one user split over both replicas 200', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        passwordGrant((i % 2 === 0 ? a : b).url, 'frank', 'frank-password'),
      ),
    )
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200))
    expect(providerCalls(calls, 'frank')).toHaveLength(20)
  })

  it('counts hostile usernames without a 500: 10,000 random characters, a lone surrogate', async () => {
    const long = randomBytes(7500).toString('base64')
    for (const username of [long, `${long}x`, '\ud800', 'a\u0000b']) {
      const res = await postJson(a.url, HS.host, {
        grant_type: 'password',
        username,
        password: 'wrong',
        client_id: HS.client,
        client_secret: HS.secret,
      })
      expect(res.status, username.slice(0, 10)).toBe(400)
      expect(res.json).toMatchObject({ error: 'invalid_grant' })
    }
  })

  it('clears at one replica the count that failures at the other built up', async () => {
    for (let i = 0; i < MAX_FAILURES - 1; i++) {
      expect((await passwordGrant(a.url, 'carol', `guess-${i}`)).status).toBe(400)
    }
    expect((await passwordGrant(b.url, 'carol', 'carol-password')).status).toBe(200)
    for (let i = 0; i < MAX_FAILURES; i++) {
      expect((await passwordGrant(i % 2 === 0 ? a.url : b.url, 'carol', `again-${i}`)).status).toBe(
        400,
      )
    }
    expect((await passwordGrant(a.url, 'carol', 'carol-password')).status).toBe(429)
  })
})
