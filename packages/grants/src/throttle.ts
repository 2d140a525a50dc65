import type { GrantDeps } from './context.js'
import { OAuthError } from './errors.js'
import type { AuthenticatedUser, UserAuthenticator } from './ports.js'

/** Who is trying a password, for throttling. */
export interface PasswordAttempt {
  tenant: string
  username: string
  password: string
  /** The client's network address. */
  address: string
}

/**
 * Checks a username and password through the tenant's providers, throttled per tenant+username
 * and per client address (DESIGN §4): past either limit the check is refused before the
 * provider is asked, with `temporarily_unavailable` and the seconds until the window ends.
 * Shared by the password grant and the login page.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3.2
 */
export async function checkPasswordThrottled(
  attempt: PasswordAttempt,
  users: UserAuthenticator,
  deps: Pick<GrantDeps, 'throttle' | 'throttlePolicy' | 'clock'>,
): Promise<AuthenticatedUser | null> {
  const now = deps.clock()
  const policy = deps.throttlePolicy
  const userKey = `user:${attempt.tenant}:${attempt.username.normalize('NFC').toLowerCase()}`
  const addressKey = `addr:${attempt.address}`
  const [userFailures, addressFailures] = await Promise.all([
    deps.throttle.getFailures(userKey, now),
    deps.throttle.getFailures(addressKey, now),
  ])
  const blockedUntil = Math.max(
    userFailures.count >= policy.maxFailuresPerUser ? userFailures.resetAt : 0,
    addressFailures.count >= policy.maxFailuresPerAddress ? addressFailures.resetAt : 0,
  )
  if (blockedUntil > now) {
    throw new OAuthError('temporarily_unavailable', 'too many failed attempts; try again later', {
      retryAfterSeconds: Math.max(1, Math.ceil((blockedUntil - now) / 1000)),
    })
  }

  const user = await users.authenticate({ username: attempt.username, password: attempt.password })
  if (user === null) {
    await Promise.all([
      deps.throttle.recordFailure(userKey, now, policy.windowMs),
      deps.throttle.recordFailure(addressKey, now, policy.windowMs),
    ])
    return null
  }
  // A write only when there is something to forget keeps the common success path read-only.
  if (userFailures.count > 0) await deps.throttle.clearFailures(userKey)
  return user
}
