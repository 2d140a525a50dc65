import { describe, expect, it } from 'vitest'
import type { GrantDeps } from './context.js'
import { OAuthError, ProviderFailureError } from './errors.js'
import type { AuthenticatedUser, ThrottleStore, UserAuthenticator } from './ports.js'
import { sha256Hex } from './crypto.js'
import { memoryThrottle } from './test-utils/memory-throttle.js'
import {
  addressThrottleKey,
  checkPasswordThrottled,
  ThrottleBusyError,
  ThrottledError,
} from './throttle.js'

// Unit test of hold-then-settle with an in-test store; the issuer's e2e tests prove the same
// over HTTP against SQLite files and PostgreSQL, across processes.
const t0 = 1_700_000_000_000

function deps(now = { t: t0 }): Pick<GrantDeps, 'throttle' | 'throttlePolicy' | 'clock'> {
  return {
    throttle: memoryThrottle(),
    throttlePolicy: {
      maxFailuresPerUser: 3,
      maxFailuresPerAddress: 5,
      windowMs: 60_000,
      waitMs: 5_000,
      leaseMs: 15_000,
    },
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

describe('checkPasswordThrottled', () => {
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

  it('lets 20 parallel sign-ins of one user with the right password all succeed', async () => {
    const users = countingUsers()
    const d = deps()
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        outcome(checkPasswordThrottled(attempt('alice', 'right'), users, d)),
      ),
    )
    expect(results).toEqual(Array.from({ length: 20 }, () => 'ok'))
    expect(users.calls).toHaveLength(20)
  })

  it('lets the right password through after wrong ones that stay below the limit', async () => {
    const users = countingUsers()
    const d = deps()
    const results = await Promise.all(
      ['wrong', 'wrong', 'right', 'right', 'right', 'right'].map((password) =>
        outcome(checkPasswordThrottled(attempt('alice', password), users, d)),
      ),
    )
    expect(results).toEqual(['wrong', 'wrong', 'ok', 'ok', 'ok', 'ok'])
  })

  it('names the counter that refused: the user, or the address', async () => {
    const users = countingUsers()
    const d = deps()
    for (let i = 0; i < 3; i++) await checkPasswordThrottled(attempt('alice', 'wrong'), users, d)
    const byUser = await checkPasswordThrottled(attempt('alice', 'right'), users, d).catch(
      (e: unknown) => e,
    )
    expect(byUser).toBeInstanceOf(ThrottledError)
    expect(byUser).toMatchObject({
      throttledBy: 'user',
      description: 'too many failed sign-in attempts for this user; try again later',
    })
    for (let i = 0; i < 2; i++) await checkPasswordThrottled(attempt(`u${i}`, 'wrong'), users, d)
    const byAddress = await checkPasswordThrottled(attempt('bob', 'right'), users, d).catch(
      (e: unknown) => e,
    )
    expect(byAddress).toMatchObject({
      throttledBy: 'address',
      description: 'too many failed sign-in attempts from this address; try again later',
    })
  })

  it('answers ThrottleBusyError once it waited waitMs for a check that does not settle', async () => {
    const d = { ...deps(), throttlePolicy: { ...deps().throttlePolicy, waitMs: 50 } }
    const pending: (() => void)[] = []
    const slow: UserAuthenticator = {
      authenticate: () =>
        new Promise((resolve) => {
          pending.push(() => resolve(null))
        }),
    }
    // Three checks in flight fill alice's limit; the fourth waits, then gives up.
    const inFlight = Array.from({ length: 3 }, () =>
      checkPasswordThrottled(attempt('alice', 'wrong'), slow, d),
    )
    await new Promise((resolve) => setTimeout(resolve, 5))
    const waited = await checkPasswordThrottled(attempt('alice', 'right'), slow, d).catch(
      (e: unknown) => e,
    )
    expect(waited).toBeInstanceOf(ThrottleBusyError)
    expect(waited).toMatchObject({ waitedFor: 'user', retryAfterSeconds: 1 })
    for (const finish of pending) finish()
    expect(await Promise.all(inFlight)).toEqual([null, null, null])
  })

  it('stops waiting on the holds of a stopped process once their lease runs out', async () => {
    const clock = { t: t0 }
    const base = deps(clock)
    const d = { ...base, throttlePolicy: { ...base.throttlePolicy, waitMs: 30 } }
    const alice = { key: `user:${sha256Hex('acme\nalice')}`, limit: 3 }
    // Three holds on alice that no one will settle, as a process that stopped mid-check leaves.
    for (let i = 0; i < 3; i++) {
      const hold = await d.throttle.reserveAttempts([alice], { now: clock.t, leaseMs: 15_000 })
      expect(hold.status).toBe('granted')
    }
    const users = countingUsers()
    await expect(checkPasswordThrottled(attempt('alice', 'right'), users, d)).rejects.toThrow(
      ThrottleBusyError,
    )
    expect(users.calls).toEqual([])
    clock.t += 15_000
    expect(await outcome(checkPasswordThrottled(attempt('alice', 'right'), users, d))).toBe('ok')
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
      reserveAttempts(keys, terms) {
        calls.push(`reserve ${keys.length}`)
        return store.reserveAttempts(keys, terms)
      },
      settleAttempts(settlement, window) {
        calls.push(`settle fail ${settlement.fail.length} clear ${settlement.clear.length}`)
        return store.settleAttempts(settlement, window)
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
      'settle fail 0 clear 1',
      'reserve 2',
      'settle fail 2 clear 0',
      'reserve 2',
      'settle fail 0 clear 0',
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

describe('addressThrottleKey', () => {
  it('counts an IPv4 address as itself, an IPv6 address as its /64', () => {
    expect(addressThrottleKey('192.0.2.1')).not.toBe(addressThrottleKey('192.0.2.2'))
    expect(addressThrottleKey('2001:db8:1:2::1')).toBe(
      addressThrottleKey('2001:0db8:0001:0002:ffff:eeee:dddd:cccc'),
    )
    expect(addressThrottleKey('2001:db8:1:2::1')).toBe(addressThrottleKey('2001:db8:1:2::1%eth0'))
    expect(addressThrottleKey('2001:db8:1:2::1')).not.toBe(addressThrottleKey('2001:db8:1:3::1'))
    expect(addressThrottleKey('fe80::1')).toBe(addressThrottleKey('fe80::ffff:1:2:3'))
  })

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(addressThrottleKey('::ffff:192.0.2.1')).toBe(addressThrottleKey('192.0.2.1'))
    expect(addressThrottleKey('::FFFF:192.0.2.1')).toBe(addressThrottleKey('192.0.2.1'))
    expect(addressThrottleKey('::ffff:192.0.2.1')).not.toBe(addressThrottleKey('::ffff:192.0.2.2'))
  })

  it('keeps anything that is not an address as it is', () => {
    expect(addressThrottleKey('unknown')).not.toBe(addressThrottleKey('other'))
  })
})
