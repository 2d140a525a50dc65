import { describe, expect, it } from 'vitest'
import type { GrantDeps } from './context.js'
import { OAuthError, ProviderFailureError } from './errors.js'
import type { AuthenticatedUser, ThrottleStore, UserAuthenticator } from './ports.js'
import { memoryThrottle } from './test-utils/memory-throttle.js'
import { checkPasswordThrottled } from './throttle.js'

// Unit test of reserve-then-settle with an in-test store; the issuer's e2e tests prove the same
// over HTTP against SQLite files and PostgreSQL, across processes.
const t0 = 1_700_000_000_000

function deps(now = { t: t0 }): Pick<GrantDeps, 'throttle' | 'throttlePolicy' | 'clock'> {
  return {
    throttle: memoryThrottle(),
    throttlePolicy: { maxFailuresPerUser: 3, maxFailuresPerAddress: 5, windowMs: 60_000 },
    clock: () => now.t,
  }
}

/** A provider that answers after a turn of the event loop and remembers what it was asked. */
function countingUsers(): UserAuthenticator & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    async authenticate({ username, password }): Promise<AuthenticatedUser | null> {
      calls.push(`${username}:${password}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
      return password === 'right' ? { sub: username } : null
    },
  }
}

const attempt = (username: string, password: string, address = '192.0.2.1') => ({
  tenant: 'acme',
  username,
  password,
  address,
})

async function outcome(promise: Promise<AuthenticatedUser | null>): Promise<string> {
  try {
    return (await promise) === null ? 'wrong' : 'ok'
  } catch (error) {
    if (error instanceof OAuthError) return error.code
    throw error
  }
}

describe('checkPasswordThrottled (issue #11)', () => {
  it('lets at most the limit of 50 parallel guesses reach the provider', async () => {
    const users = countingUsers()
    const d = deps()
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        outcome(checkPasswordThrottled(attempt('alice', i === 30 ? 'right' : 'wrong'), users, d)),
      ),
    )
    expect(users.calls).toHaveLength(3)
    expect(results.filter((r) => r === 'wrong')).toHaveLength(3)
    expect(results.filter((r) => r === 'temporarily_unavailable')).toHaveLength(47)
    expect(results[30]).toBe('temporarily_unavailable')
  })

  it('counts parallel guesses across usernames against the address', async () => {
    const users = countingUsers()
    const d = deps()
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        outcome(checkPasswordThrottled(attempt(`user${i}`, 'wrong'), users, d)),
      ),
    )
    expect(users.calls).toHaveLength(5)
    expect(results.filter((r) => r === 'temporarily_unavailable')).toHaveLength(35)
  })

  it('clears the user on success and gives the address its reservation back', async () => {
    const users = countingUsers()
    const d = deps()
    for (let i = 0; i < 2; i++) {
      expect(await outcome(checkPasswordThrottled(attempt('alice', 'wrong'), users, d))).toBe(
        'wrong',
      )
    }
    expect(await outcome(checkPasswordThrottled(attempt('alice', 'right'), users, d))).toBe('ok')
    // alice starts again from zero; the address holds its two failures only.
    for (let i = 0; i < 3; i++) {
      expect(await outcome(checkPasswordThrottled(attempt('alice', 'wrong'), users, d))).toBe(
        'wrong',
      )
    }
    expect(await outcome(checkPasswordThrottled(attempt('alice', 'right'), users, d))).toBe(
      'temporarily_unavailable',
    )
    expect(await outcome(checkPasswordThrottled(attempt('bob', 'wrong'), users, d))).toBe(
      'temporarily_unavailable',
    )
  })

  it('gives both reservations back when the provider fails', async () => {
    const d = deps()
    const failing: UserAuthenticator = {
      authenticate: () =>
        Promise.reject(new ProviderFailureError('ERR_PROVIDER_TIMEOUT', 'users.mjs', 'timed out')),
    }
    for (let i = 0; i < 10; i++) {
      await expect(checkPasswordThrottled(attempt('alice', 'x'), failing, d)).rejects.toThrow(
        ProviderFailureError,
      )
    }
    expect(
      await outcome(checkPasswordThrottled(attempt('alice', 'right'), countingUsers(), d)),
    ).toBe('ok')
  })

  it('answers a locked user with the seconds left in the window', async () => {
    const clock = { t: t0 }
    const d = deps(clock)
    const users = countingUsers()
    for (let i = 0; i < 3; i++) await checkPasswordThrottled(attempt('alice', 'wrong'), users, d)
    clock.t += 20_500
    const error = await checkPasswordThrottled(attempt('alice', 'right'), users, d).catch(
      (e: unknown) => e,
    )
    expect(error).toMatchObject({ code: 'temporarily_unavailable', retryAfterSeconds: 40 })
    clock.t += 39_500
    expect(await outcome(checkPasswordThrottled(attempt('alice', 'right'), users, d))).toBe('ok')
  })

  it('makes one store call to reserve and one to settle a check, whatever its outcome', async () => {
    const store = memoryThrottle()
    const calls: string[] = []
    const counted: ThrottleStore = {
      reserveAttempts(keys, window) {
        calls.push(`reserve ${keys.length}`)
        return store.reserveAttempts(keys, window)
      },
      settleAttempts(settlement) {
        calls.push(`settle clear ${settlement.clear.length} release ${settlement.release.length}`)
        return store.settleAttempts(settlement)
      },
    }
    const d = { ...deps(), throttle: counted }
    const failing: UserAuthenticator = {
      authenticate: () =>
        Promise.reject(new ProviderFailureError('ERR_PROVIDER_TIMEOUT', 'users.mjs', 'timed out')),
    }
    await checkPasswordThrottled(attempt('alice', 'right'), countingUsers(), d)
    await checkPasswordThrottled(attempt('alice', 'wrong'), countingUsers(), d)
    await expect(checkPasswordThrottled(attempt('alice', 'x'), failing, d)).rejects.toThrow(
      ProviderFailureError,
    )
    expect(calls).toEqual([
      'reserve 2',
      'settle clear 1 release 1',
      'reserve 2',
      'reserve 2',
      'settle clear 0 release 2',
    ])
  })

  it('counts nothing on the user when the address refuses the check', async () => {
    const d = deps()
    const users = countingUsers()
    for (let i = 0; i < 5; i++) {
      await checkPasswordThrottled(attempt(`user${i}`, 'wrong', '192.0.2.1'), users, d)
    }
    // Refused by the address: alice's own allowance (3) is untouched, so three wrong passwords
    // from another address still reach the provider.
    for (let i = 0; i < 4; i++) {
      expect(await outcome(checkPasswordThrottled(attempt('alice', 'x'), users, d))).toBe(
        'temporarily_unavailable',
      )
    }
    for (let i = 0; i < 3; i++) {
      expect(
        await outcome(checkPasswordThrottled(attempt('alice', 'wrong', '192.0.2.2'), users, d)),
      ).toBe('wrong')
    }
  })
})
