import type { GrantDeps } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { AuthenticatedUser, Reservation, ThrottleStore, UserAuthenticator } from './ports.js'

/** Who is trying a password, for throttling. */
export interface PasswordAttempt {
  tenant: string
  username: string
  password: string
  /** The client's network address. */
  address: string
}

function throttled(reservation: Reservation, now: number): OAuthError {
  return new OAuthError('temporarily_unavailable', 'too many failed attempts; try again later', {
    retryAfterSeconds: Math.max(1, Math.ceil((reservation.resetAt - now) / 1000)),
  })
}

/** Gives back reservations without letting a store error hide the error being handled. */
async function giveBack(
  store: ThrottleStore,
  reservations: readonly (readonly [string, Reservation])[],
): Promise<void> {
  await Promise.allSettled(reservations.map(([key, r]) => store.releaseAttempt(key, r.resetAt)))
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
  const addressKey = `addr:${sha256Hex(attempt.address)}`

  // The user first: a locked user costs one statement, and a flood of usernames from one
  // address is stopped by the address key right after.
  const user = await throttle.reserveAttempt(userKey, {
    limit: policy.maxFailuresPerUser,
    now,
    windowMs,
  })
  if (!user.granted) throw throttled(user, now)
  let address: Reservation
  try {
    address = await throttle.reserveAttempt(addressKey, {
      limit: policy.maxFailuresPerAddress,
      now,
      windowMs,
    })
  } catch (error) {
    await giveBack(throttle, [[userKey, user]])
    throw error
  }
  if (!address.granted) {
    await giveBack(throttle, [[userKey, user]])
    throw throttled(address, now)
  }

  let answer: AuthenticatedUser | null
  try {
    answer = await users.authenticate({ username: attempt.username, password: attempt.password })
  } catch (error) {
    // No answer about the password: nothing to count against anyone.
    await giveBack(throttle, [
      [userKey, user],
      [addressKey, address],
    ])
    throw error
  }
  if (answer === null) return null
  await Promise.all([
    throttle.clearAttempts(userKey),
    throttle.releaseAttempt(addressKey, address.resetAt),
  ])
  return answer
}
