import type { GrantDeps } from './context.js'
import { sha256Hex } from './crypto.js'
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

function throttled(resetAt: number, now: number): OAuthError {
  return new OAuthError('temporarily_unavailable', 'too many failed attempts; try again later', {
    retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)),
  })
}

/** The throttle key of a client address: failed passwords and unknown session cookies count on it. */
export function addressThrottleKey(address: string): string {
  return `addr:${sha256Hex(address)}`
}

/**
 * Checks a username and password through the tenant's providers, throttled per tenant+username
 * and per client address. The attempt is counted before the provider is asked (reserve, then
 * settle), so parallel guesses cannot all slip in while the first ones are being checked: past
 * either limit the check is refused without asking the provider, with `temporarily_unavailable`
 * and the seconds until the window ends. Settling: a wrong password stays counted against both
 * keys; a success clears the user's count and gives back the address's reservation; a provider
 * that fails or times out gives back both (the error propagates). Shared by the password grant
 * and the login page.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3.2
 */
export async function checkPasswordThrottled(
  attempt: PasswordAttempt,
  users: UserAuthenticator,
  deps: Pick<GrantDeps, 'throttle' | 'throttlePolicy' | 'clock'>,
): Promise<AuthenticatedUser | null> {
  const now = deps.clock()
  const { throttle, throttlePolicy: policy } = deps
  const windowMs = policy.windowMs
  // Hashed: a key is a bounded string whatever the client sent (a 10 kB username, an address
  // from a forged header), fit for any store's index, and the table holds no usernames.
  const userKey = `user:${sha256Hex(`${attempt.tenant}\n${attempt.username.normalize('NFC').toLowerCase()}`)}`
  const addressKey = addressThrottleKey(attempt.address)

  // Both keys or neither, in one store call: a user refused for the address's sake keeps no
  // attempt, not even for a moment. The user first, so that a locked user is the one reported.
  const reservation = await throttle.reserveAttempts(
    [
      { key: userKey, limit: policy.maxFailuresPerUser },
      { key: addressKey, limit: policy.maxFailuresPerAddress },
    ],
    { now, windowMs },
  )
  if (!reservation.granted) throw throttled(reservation.resetAt, now)
  const [user, address] = reservation.held
  if (user === undefined || address === undefined) {
    throw new Error('reserveAttempts: a granted reservation lacks a key')
  }

  let answer: AuthenticatedUser | null
  try {
    answer = await users.authenticate({ username: attempt.username, password: attempt.password })
  } catch (error) {
    // No answer about the password: nothing to count against anyone. A store error here must
    // not hide the provider's.
    await throttle.settleAttempts({ clear: [], release: [user, address] }).catch(() => undefined)
    throw error
  }
  if (answer === null) return null
  await throttle.settleAttempts({ clear: [userKey], release: [address] })
  return answer
}
