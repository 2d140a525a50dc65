import type { GrantDeps } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { AuthenticatedUser, ThrottleLimit, UserAuthenticator } from './ports.js'
import { addressBucket } from './throttle-address.js'
import { reserveWaiting, settleAndWake } from './throttle-wait.js'

/** Who is trying a password, for throttling. */
export interface PasswordAttempt {
  tenant: string
  username: string
  password: string
  /** The client's network address. */
  address: string
}

/** Which counter refused an attempt: the user's, or the client address's. */
export type ThrottleCause = 'user' | 'address'

/**
 * An attempt refused because a counter holds its limit of failures: `temporarily_unavailable`,
 * answered 429 with the seconds until the window ends.
 */
export class ThrottledError extends OAuthError {
  readonly throttledBy: ThrottleCause

  constructor(throttledBy: ThrottleCause, retryAfterSeconds: number) {
    super(
      'temporarily_unavailable',
      throttledBy === 'user'
        ? 'too many failed sign-in attempts for this user; try again later'
        : 'too many failed sign-in attempts from this address; try again later',
      { retryAfterSeconds },
    )
    this.throttledBy = throttledBy
  }
}

/**
 * An attempt that waited PROVIDER_TIMEOUT_MS for the attempts ahead of it on a counter to be
 * settled, without a decision: the edge answers 503 `temporarily_unavailable`.
 */
export class ThrottleBusyError extends Error {
  override readonly name = 'ThrottleBusyError'
  readonly waitedFor: ThrottleCause
  /** Seconds after which asking again is likely to find the attempts ahead settled. */
  readonly retryAfterSeconds: number

  constructor(waitedFor: ThrottleCause, retryAfterSeconds: number) {
    super(`sign-in attempts on the ${waitedFor} counter were not settled in time`)
    this.waitedFor = waitedFor
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/**
 * The throttle key of a client address (its IPv4 address, or its IPv6 /64): failed passwords
 * and unknown session cookies count on it.
 */
export function addressThrottleKey(address: string): string {
  return `addr:${sha256Hex(addressBucket(address))}`
}

type ThrottleDeps = Pick<GrantDeps, 'throttle' | 'throttlePolicy' | 'clock'>

/**
 * Holds one attempt on `keys`, waiting (up to the policy's `waitMs`) while attempts in flight
 * could push a key past its limit. Throws {@link ThrottledError} when a key holds its limit of
 * failures and {@link ThrottleBusyError} when the wait ran out.
 *
 * @returns the hold to settle
 */
export async function holdAttempt(
  keys: readonly (ThrottleLimit & { cause: ThrottleCause })[],
  deps: ThrottleDeps,
): Promise<string> {
  const { throttle, throttlePolicy: policy } = deps
  const limits = keys.map(({ key, limit }) => ({ key, limit }))
  const outcome = await reserveWaiting(throttle, limits, {
    clock: deps.clock,
    leaseMs: policy.leaseMs,
    waitMs: policy.waitMs,
  })
  const causeOf = (key: string): ThrottleCause =>
    keys.find((asked) => asked.key === key)?.cause ?? 'address'
  switch (outcome.status) {
    case 'granted':
      return outcome.hold
    case 'blocked': {
      const seconds = Math.max(1, Math.ceil((outcome.resetAt - deps.clock()) / 1000))
      throw new ThrottledError(causeOf(outcome.key), seconds)
    }
    case 'timeout':
      throw new ThrottleBusyError(
        causeOf(outcome.key),
        Math.max(1, Math.ceil(policy.waitMs / 1000)),
      )
  }
}

/** Ends a hold of {@link holdAttempt}: counts `fail`, clears `clear`, wakes this process's waiters. */
export function settleAttempt(
  hold: string,
  keys: readonly string[],
  outcome: { fail: readonly string[]; clear: readonly string[] },
  deps: ThrottleDeps,
): Promise<void> {
  return settleAndWake(
    deps.throttle,
    { hold, ...outcome },
    keys,
    deps.clock(),
    deps.throttlePolicy.windowMs,
  )
}

/**
 * Checks a username and password through the tenant's providers, throttled per tenant+username
 * and per client address. Only failures count against a limit: the attempt is held on both
 * counters while the provider is asked, and an attempt that could push a counter past its
 * limit (failures plus attempts in flight) waits for those ahead to settle, so at most the
 * limit's worth of wrong passwords is ever checked and parallel sign-ins with the right
 * password all go through. Settling: a wrong password counts a failure on both counters; a
 * success clears the user's failures; a provider that fails or times out counts nothing (the
 * error propagates). Shared by the password grant and the login page.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3.2
 */
export async function checkPasswordThrottled(
  attempt: PasswordAttempt,
  users: UserAuthenticator,
  deps: ThrottleDeps,
): Promise<AuthenticatedUser | null> {
  const policy = deps.throttlePolicy
  // Hashed: a key is a bounded string whatever the client sent (a 10 kB username, an address
  // from a forged header), fit for any store's index, and the table holds no usernames.
  const userKey = `user:${sha256Hex(`${attempt.tenant}\n${attempt.username.normalize('NFC').toLowerCase()}`)}`
  const addressKey = addressThrottleKey(attempt.address)
  const keys = [userKey, addressKey]

  // The user first, so that a locked user is the one reported.
  const hold = await holdAttempt(
    [
      { key: userKey, limit: policy.maxFailuresPerUser, cause: 'user' },
      { key: addressKey, limit: policy.maxFailuresPerAddress, cause: 'address' },
    ],
    deps,
  )

  let answer: AuthenticatedUser | null
  try {
    answer = await users.authenticate({ username: attempt.username, password: attempt.password })
  } catch (error) {
    // No answer about the password: nothing to count against anyone. A store error here must
    // not hide the provider's.
    await settleAttempt(hold, keys, { fail: [], clear: [] }, deps).catch(() => undefined)
    throw error
  }
  if (answer === null) {
    await settleAttempt(hold, keys, { fail: keys, clear: [] }, deps)
    return null
  }
  await settleAttempt(hold, keys, { fail: [], clear: [userKey] }, deps)
  return answer
}
