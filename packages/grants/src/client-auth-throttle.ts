import type { GrantDeps } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { ClientAuthFailure } from './errors.js'
import type { FailureLimit } from './ports.js'
import { addressThrottleKey } from './throttle.js'

/** What the client-authentication throttle needs of the grant dependencies. */
export type ClientAuthThrottleDeps = Pick<
  GrantDeps,
  'clientAuthFailures' | 'clientAuthPolicy' | 'clock'
>

/** Who is authenticating, as far as the request tells before any credential is checked. */
export interface ClientAuthAttempt {
  tenant: string
  /** The client_id as sent, or the one of a configured client it names; absent if none. */
  clientId: string | undefined
  /** The client's network address. */
  address: string
  endpoint: ClientAuthFailure['endpoint']
}

/**
 * The counters of an attempt: its client_id and address (when it names a client), then its
 * address alone. Hashed: a key is a bounded string whatever the client sent (a 10 kB client_id,
 * any Unicode), and the table holds neither client ids nor addresses. The client_id is compared
 * as clients are looked up (case-insensitively), and the address goes in as the password
 * throttle counts it (addressThrottleKey), so that both throttles see the same addresses.
 */
export function clientAuthKeys(
  attempt: ClientAuthAttempt,
  deps: Pick<GrantDeps, 'clientAuthPolicy'>,
): FailureLimit[] {
  const policy = deps.clientAuthPolicy
  const address = addressThrottleKey(attempt.address)
  const perAddress = { key: address, limit: policy.maxFailuresPerAddress }
  if (attempt.clientId === undefined) return [perAddress]
  const id = attempt.clientId.toLowerCase()
  const key = `client:${sha256Hex(`${attempt.tenant}\n${id}\n${address}`)}`
  return [{ key, limit: policy.maxFailures }, perAddress]
}

function throttled(attempt: ClientAuthAttempt, resetAt: number, now: number): OAuthError {
  return new OAuthError(
    'temporarily_unavailable',
    'too many failed client authentications; try again later',
    {
      retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)),
      clientAuthFailure: {
        clientId: attempt.clientId,
        endpoint: attempt.endpoint,
        reason: 'throttled',
        detail: 'a failure count of the client or the address is full',
      },
    },
  )
}

/**
 * Refuses the attempt with `temporarily_unavailable` (429, Retry-After) when the window of
 * either key already holds its limit. Called before any credential is checked, and counts
 * nothing: a refused attempt neither checks nor spends a guess.
 */
export async function refuseWhenThrottled(
  attempt: ClientAuthAttempt,
  keys: readonly FailureLimit[],
  deps: ClientAuthThrottleDeps,
): Promise<void> {
  const now = deps.clock()
  const open = await deps.clientAuthFailures.failures(
    keys.map(({ key }) => key),
    now,
  )
  for (const [i, { limit }] of keys.entries()) {
    const window = open[i]
    if (window !== undefined && window.count >= limit) throw throttled(attempt, window.resetAt, now)
  }
}

/**
 * Counts a failed authentication on both keys and returns the error to answer: the failure
 * itself, or `temporarily_unavailable` when concurrent failures filled a window between the
 * check and now. The count and the limit are one atomic step in the store, so of any number of
 * concurrent wrong guesses at most the limit are answered as failures; the others learn nothing.
 */
export async function countFailure(
  attempt: ClientAuthAttempt,
  keys: readonly FailureLimit[],
  failure: OAuthError,
  deps: ClientAuthThrottleDeps,
): Promise<OAuthError> {
  const now = deps.clock()
  const record = await deps.clientAuthFailures.recordFailure(keys, {
    now,
    windowMs: deps.clientAuthPolicy.windowMs,
  })
  if (record.recorded) return failure
  const refused = throttled(attempt, record.resetAt, now)
  return new OAuthError(refused.code, refused.description, {
    retryAfterSeconds: refused.retryAfterSeconds,
    ...(failure.clientAuthFailure === undefined
      ? {}
      : { clientAuthFailure: failure.clientAuthFailure }),
  })
}
