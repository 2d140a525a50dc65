/**
 * Failed client authentication is throttled per client_id+address and per address, one count
 * across /token, /revoke and /introspect, decided before the secret is checked.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { clientKey } from '../support/client-assertion.js'
import type { ClientKey } from '../support/client-assertion.js'
import {
  CA,
  statuses,
  withAssertion,
  withSecret,
  writeClientAuthConfig,
} from '../support/client-auth.js'
import { tempDir, useIssuer } from '../support/issuer.js'

const WINDOW_SECONDS = 900

describe('client authentication throttling at /token, /revoke and /introspect', () => {
  let key: ClientKey
  let stranger: ClientKey
  const clock = { now: Date.now() }
  const tmp = tempDir()
  afterAll(() => tmp.remove())
  const issuer = useIssuer(async () => {
    ;[key, stranger] = await Promise.all([clientKey('ES256', 'ca-1'), clientKey('ES256', 'ca-1')])
    return {
      config: writeClientAuthConfig(tmp.dir, key),
      clock: () => clock.now,
      vars: { TRUST_PROXY: '1' },
    }
  })

  const wrong = (endpoint: 'token' | 'revoke' | 'introspect', address: string, n: number) =>
    withSecret(issuer.url, endpoint, CA.client, `wrong-secret-guess-${n}`, address)
  const right = (endpoint: 'token' | 'revoke' | 'introspect', address: string) =>
    withSecret(issuer.url, endpoint, CA.client, CA.secret, address)

  it('refuses the 21st failure with 429 and Retry-After, counting /token, /revoke and /introspect as one', async () => {
    const address = '198.51.100.1'
    const failures = [
      ...(await Promise.all([...Array(10).keys()].map((n) => wrong('token', address, n)))),
      ...(await Promise.all([...Array(5).keys()].map((n) => wrong('revoke', address, n)))),
      ...(await Promise.all([...Array(5).keys()].map((n) => wrong('introspect', address, n)))),
    ]
    expect(statuses(failures)).toEqual({ 401: 20 })
    expect(failures[0]?.json).toMatchObject({ error: 'invalid_client' })

    for (const endpoint of ['token', 'revoke', 'introspect'] as const) {
      const refused = await wrong(endpoint, address, 21)
      expect(refused.status, endpoint).toBe(429)
      expect(refused.json).toMatchObject({ error: 'temporarily_unavailable' })
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(WINDOW_SECONDS - 60)
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS)
      // Decided before the secret is checked: the right secret is refused alike.
      const rightButRefused = await right(endpoint, address)
      expect(rightButRefused.status, endpoint).toBe(429)
      expect(rightButRefused.headers['retry-after']).toBeDefined()
    }
    // Another address is not affected.
    expect((await right('token', '198.51.100.2')).status).toBe(200)

    // The window ends: the right secret works again from the locked address.
    clock.now += WINDOW_SECONDS * 1000
    expect((await right('token', address)).status).toBe(200)
    expect((await right('introspect', address)).status).toBe(200)
  })

  it('counts a refused attempt as nothing: the count stays at the limit, not past it', async () => {
    const address = '198.51.100.3'
    for (let n = 0; n < 20; n++) expect((await wrong('token', address, n)).status).toBe(401)
    for (let n = 0; n < 30; n++) expect((await wrong('token', address, n)).status).toBe(429)
    clock.now += WINDOW_SECONDS * 1000
    // A new window with nothing carried over: 20 more failures are answered, not 0.
    for (let n = 0; n < 20; n++) expect((await wrong('token', address, n)).status).toBe(401)
    expect((await wrong('token', address, 20)).status).toBe(429)
    clock.now += WINDOW_SECONDS * 1000
  })

  it('counts an unknown client_id under the id as sent', async () => {
    const address = '198.51.100.4'
    const unknown = 'ffffffff-0000-4000-8000-00000000beef'
    for (let n = 0; n < 20; n++) {
      expect((await withSecret(issuer.url, 'token', unknown, 'guess', address)).status).toBe(401)
    }
    expect((await withSecret(issuer.url, 'token', unknown, 'guess', address)).status).toBe(429)
    // Any case of it: client ids are compared case-insensitively.
    const upper = unknown.toUpperCase()
    expect((await withSecret(issuer.url, 'revoke', upper, 'guess', address)).status).toBe(429)
    // The known client at the same address is another count.
    expect((await right('token', address)).status).toBe(200)
    clock.now += WINDOW_SECONDS * 1000
  })

  it('counts a private_key_jwt assertion that does not verify', async () => {
    const address = '198.51.100.5'
    for (let n = 0; n < 20; n++) {
      const bad = await withAssertion(issuer.url, stranger, address, clock.now)
      expect(bad.status).toBe(401)
      expect(bad.json).toMatchObject({ error: 'invalid_client' })
    }
    const refused = await withAssertion(issuer.url, key, address, clock.now)
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBeDefined()
    expect((await withAssertion(issuer.url, key, '198.51.100.6', clock.now)).status).toBe(200)
    clock.now += WINDOW_SECONDS * 1000
  })

  it('refuses an address past 100 failures across client ids', async () => {
    const address = '198.51.100.7'
    for (let id = 0; id < 10; id++) {
      const clientId = `eeeeeeee-0000-4000-8000-0000000000${String(id).padStart(2, '0')}`
      const answers = await Promise.all(
        [...Array(10).keys()].map(() =>
          withSecret(issuer.url, 'token', clientId, 'guess', address),
        ),
      )
      expect(statuses(answers)).toEqual({ 401: 10 })
    }
    const fresh = 'eeeeeeee-0000-4000-8000-0000000000ff'
    expect((await withSecret(issuer.url, 'token', fresh, 'guess', address)).status).toBe(429)
    expect((await right('token', address)).status).toBe(429)
    expect((await right('token', '198.51.100.8')).status).toBe(200)
    clock.now += WINDOW_SECONDS * 1000
  })

  it('lets exactly 20 of 60 parallel wrong guesses reach the secret check', async () => {
    const address = '198.51.100.9'
    const answers = await Promise.all(
      [...Array(60).keys()].map((n) => wrong(n % 3 === 0 ? 'introspect' : 'token', address, n)),
    )
    expect(statuses(answers)).toEqual({ 401: 20, 429: 40 })
    clock.now += WINDOW_SECONDS * 1000
  })

  it('never refuses parallel requests with the right secret: only failures count', async () => {
    const address = '198.51.100.10'
    const answers = await Promise.all([...Array(60).keys()].map(() => right('token', address)))
    expect(statuses(answers)).toEqual({ 200: 60 })
    // Nor does a success clear the failures counted before it.
    for (let n = 0; n < 20; n++) expect((await wrong('token', address, n)).status).toBe(401)
    expect((await right('token', address)).status).toBe(429)
    clock.now += WINDOW_SECONDS * 1000
  })

  it('logs one line per failure: client_id, endpoint, reason; never the secret or assertion', async () => {
    const address = '198.51.100.11'
    const before = issuer.logs.length
    const guess = 'a-guessed-secret-that-must-not-be-logged'
    await withSecret(issuer.url, 'revoke', CA.client, guess, address)
    const hostile = `\u202e${'\u00e9'.repeat(2_000)}\n{"forged":true}`
    await withSecret(issuer.url, 'token', hostile, guess, address)
    const assertionSent = await withAssertion(issuer.url, stranger, address, clock.now)
    expect(assertionSent.status).toBe(401)
    const lines = issuer.logs
      .slice(before)
      .filter((line) => line.includes('client authentication failed'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatchObject({
      level: 40,
      client_id: CA.client,
      endpoint: 'revoke',
      reason: 'wrong_secret',
      tenant: 'ca',
      address,
      status: 401,
    })
    expect(lines[1]).toMatchObject({ endpoint: 'token', reason: 'unknown_client' })
    const loggedId = String(lines[1]?.client_id)
    expect(loggedId.length).toBeLessThanOrEqual(129)
    expect(loggedId).toMatch(/^\?é+…$/)
    expect(lines[2]).toMatchObject({
      client_id: CA.keyClient,
      reason: 'bad_assertion',
      detail: 'client_assertion signature does not verify',
    })
    const text = issuer.logs.slice(before).join('\n')
    expect(text).not.toContain(guess)
    expect(text).not.toContain('"forged"')
    expect(text).not.toMatch(/eyJ[\w-]+\.eyJ/)
    clock.now += WINDOW_SECONDS * 1000
  })
})
