import type { Context } from 'koa'
import { describe, expect, it } from 'vitest'
import { createAdminAuthenticator } from './admin-auth.js'
import { ProblemError } from './problem.js'

const TOKEN = 'x'.repeat(40)

/** The two request fields the authenticator reads. */
function request(authorization: string, ip = '192.0.2.1'): Context {
  return { ip, get: (name: string) => (name === 'Authorization' ? authorization : '') } as Context
}

function statusOf(check: () => void): number {
  try {
    check()
    return 200
  } catch (error) {
    if (error instanceof ProblemError) return error.status
    throw error
  }
}

describe('createAdminAuthenticator', () => {
  it('accepts the token, and refuses others of any length', () => {
    const authenticate = createAdminAuthenticator({ token: TOKEN, now: () => 0 })
    expect(statusOf(() => authenticate(request(`Bearer ${TOKEN}`)))).toBe(200)
    for (const wrong of ['', 'x', TOKEN.slice(1), `${TOKEN}x`, TOKEN.toUpperCase()]) {
      expect(
        statusOf(() => authenticate(request(`Bearer ${wrong}`, `198.51.100.${wrong.length}`))),
      ).toBe(401)
    }
  })

  it('locks an address out after maxFailures until the window ends, except the right token', () => {
    let now = 1_000_000
    const authenticate = createAdminAuthenticator({
      token: TOKEN,
      now: () => now,
      maxFailures: 3,
      windowMs: 60_000,
    })
    for (let i = 0; i < 3; i++) expect(statusOf(() => authenticate(request('Bearer no')))).toBe(401)
    expect(statusOf(() => authenticate(request('Bearer no')))).toBe(429)
    expect(statusOf(() => authenticate(request('')))).toBe(429)
    // The operator, from the same address, is never refused.
    expect(statusOf(() => authenticate(request(`Bearer ${TOKEN}`)))).toBe(200)
    // Another address is not affected.
    expect(statusOf(() => authenticate(request('Bearer no', '192.0.2.2')))).toBe(401)
    try {
      authenticate(request('Bearer no'))
    } catch (error) {
      expect((error as ProblemError).headers['Retry-After']).toBe('60')
    }
    now += 59_000
    expect(statusOf(() => authenticate(request('Bearer no')))).toBe(429)
    now += 1_000
    expect(statusOf(() => authenticate(request('Bearer no')))).toBe(401)
  })

  it('keeps memory bounded when failures come from very many addresses', () => {
    const authenticate = createAdminAuthenticator({ token: TOKEN, now: () => 0, maxFailures: 1 })
    const statuses = new Set<number>()
    for (let i = 0; i < 12_000; i++) {
      statuses.add(statusOf(() => authenticate(request('Bearer no', `10.0.${i >> 8}.${i & 255}`))))
    }
    expect([...statuses]).toEqual([401])
    // The oldest were forgotten (its lockout with them); the most recent are still remembered.
    expect(statusOf(() => authenticate(request('Bearer no', '10.0.0.0')))).toBe(401)
    expect(statusOf(() => authenticate(request('Bearer no', '10.0.46.223')))).toBe(429)
  })
})
