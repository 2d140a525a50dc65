/**
 * Password throttling that parallel requests cannot get around: a real
 * `tessera dev` process on an SQLite file, a provider script that counts the calls reaching it,
 * and 100 requests in flight at once.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpResponse } from '../support/http.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
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

function statuses(responses: HttpResponse[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

describe('password throttling under parallel requests', { timeout: 120_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  let calls: string
  let issuer: IssuerProcess

  beforeAll(async () => {
    tmp = tempDir()
    calls = join(tmp.dir, 'calls.log')
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: SCRIPTED_CONFIG,
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
        PASSWORD_MAX_FAILURES: String(MAX_FAILURES),
        // Every request of this file comes from 127.0.0.1; the per-address test has its own issuer.
        PASSWORD_MAX_FAILURES_PER_ADDRESS: '100000',
        PROVIDER_CALLS_FILE: calls,
      },
    })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp?.remove()
  })

  it('lets at most PASSWORD_MAX_FAILURES of 100 parallel password grants reach the provider', async () => {
    const right = randomBetween(50, PARALLEL)
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        passwordGrant(issuer.url, 'alice', i === right ? 'alice-password' : `guess-${i}`),
      ),
    )
    const reached = providerCalls(calls, 'alice')
    expect(reached.length).toBeLessThanOrEqual(MAX_FAILURES)
    expect(reached.every(([, outcome]) => outcome !== 'right')).toBe(true)
    expect(statuses(responses)).toEqual({ 400: reached.length, 429: PARALLEL - reached.length })
    const refused = responses[right]!
    expect(refused.status).toBe(429)
    expect(refused.json).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'too many failed sign-in attempts for this user; try again later',
    })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)

    // Other users are unaffected.
    expect((await passwordGrant(issuer.url, 'bob', 'bob-password')).status).toBe(200)
  })

  it('lets at most PASSWORD_MAX_FAILURES of 100 parallel login forms reach the provider', async () => {
    const pages = await Promise.all(
      Array.from({ length: PARALLEL }, () => openScriptedLogin(issuer.url)),
    )
    const right = randomBetween(50, PARALLEL)
    const responses = await Promise.all(
      pages.map((page, i) =>
        postLogin(issuer.url, page, 'dave', i === right ? 'dave-password' : `guess-${i}`),
      ),
    )
    const reached = providerCalls(calls, 'dave')
    expect(reached.length).toBeLessThanOrEqual(MAX_FAILURES)
    expect(reached.every(([, outcome]) => outcome !== 'right')).toBe(true)
    expect(statuses(responses)).toEqual({ 400: reached.length, 429: PARALLEL - reached.length })
    const refused = responses[right]!
    expect(refused.status).toBe(429)
    expect(refused.headers['content-type']).toMatch(/^text\/html/)
    expect(refused.text).toContain('Too many failed sign-in attempts for this user.')
    expect(refused.headers.location).toBeUndefined()

    // Another user signs in through the same form.
    const page = await openScriptedLogin(issuer.url)
    expect((await postLogin(issuer.url, page, 'erin', 'erin-password')).status).toBe(303)
  })

  it('clears the count of a user who signs in, so earlier failures are forgotten', async () => {
    for (let i = 0; i < MAX_FAILURES - 1; i++) {
      expect((await passwordGrant(issuer.url, 'carol', `guess-${i}`)).status).toBe(400)
    }
    expect((await passwordGrant(issuer.url, 'carol', 'carol-password')).status).toBe(200)
    // A fresh allowance: MAX_FAILURES more wrong passwords are checked, in parallel too.
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => passwordGrant(issuer.url, 'carol', `again-${i}`)),
    )
    expect(statuses(responses)).toEqual({ 400: MAX_FAILURES, 429: 20 - MAX_FAILURES })
    expect(providerCalls(calls, 'carol')).toHaveLength(2 * MAX_FAILURES)
  })
})

describe('per-address throttling under parallel requests', { timeout: 120_000 }, () => {
  const perAddress = 10
  let tmp: ReturnType<typeof tempDir>
  let calls: string
  let issuer: IssuerProcess

  beforeAll(async () => {
    tmp = tempDir()
    calls = join(tmp.dir, 'calls.log')
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: SCRIPTED_CONFIG,
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
        PASSWORD_MAX_FAILURES: String(MAX_FAILURES),
        PASSWORD_MAX_FAILURES_PER_ADDRESS: String(perAddress),
        PROVIDER_CALLS_FILE: calls,
      },
    })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp?.remove()
  })

  it('lets at most PASSWORD_MAX_FAILURES_PER_ADDRESS of 100 usernames from one address through', async () => {
    const right = randomBetween(50, PARALLEL)
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        i === right
          ? passwordGrant(issuer.url, 'bob', 'bob-password')
          : passwordGrant(issuer.url, `user${i}`, 'wrong'),
      ),
    )
    const reached = providerCalls(calls)
    expect(reached.length).toBeLessThanOrEqual(perAddress)
    expect(reached.every(([, outcome]) => outcome !== 'right')).toBe(true)
    expect(statuses(responses)).toEqual({ 400: reached.length, 429: PARALLEL - reached.length })
    expect(responses[right]!.status).toBe(429)
    expect(responses[right]!.json).toMatchObject({
      error_description: 'too many failed sign-in attempts from this address; try again later',
    })
  })
})
