import type { GrantDeps, TenantContext } from '../context.js'
import { randomToken, sha256Hex } from '../crypto.js'
import type { AuthenticatedUser, SessionRecord } from '../ports.js'
import {
  addressThrottleKey,
  holdAttempt,
  settleAttempt,
  ThrottleBusyError,
  ThrottledError,
} from '../throttle.js'

// What `randomToken` makes: 32 bytes of base64url. Anything else was never a session cookie.
const SESSION_VALUE = /^[\w-]{43}$/

/** A session cookie to set: its value and when the session ends (epoch milliseconds). */
export interface SessionCookie {
  value: string
  expiresAt: number
}

/** What the browser's session cookie turned out to be. */
export interface SessionLookup {
  /** The live session it names; undefined when it names none (or was not looked up). */
  session?: SessionRecord
  /** The cookie names no live session: the browser should forget it. */
  clear: boolean
}

/** Whether `record` is a session of `tenant` that is neither ended nor expired at `now`. */
export function isLiveSession(
  record: SessionRecord | undefined,
  tenant: TenantContext,
  now: number,
): record is SessionRecord {
  return (
    record !== undefined &&
    record.tenant === tenant.name &&
    record.endedAt === undefined &&
    record.expiresAt > now
  )
}

/**
 * Finds the live session a browser's cookie names, throttled like a password: a cookie that
 * names none counts as one failure on the client address's counter (the login's), and once that
 * counter holds its limit of failures no cookie is looked up at all, so guessing session values
 * is no faster than guessing passwords. A cookie that names a live session costs the address
 * nothing; while lookups are in flight it may wait for them, as a password check does.
 */
export async function findSession(
  cookie: string | undefined,
  address: string,
  tenant: TenantContext,
  deps: Pick<GrantDeps, 'sessions' | 'throttle' | 'throttlePolicy' | 'clock'>,
): Promise<SessionLookup> {
  if (cookie === undefined) return { clear: false }
  const key = addressThrottleKey(address)
  let hold: string
  try {
    hold = await holdAttempt(
      [{ key, limit: deps.throttlePolicy.maxFailuresPerAddress, cause: 'address' }],
      deps,
    )
  } catch (error) {
    // A blocked or busy address signs in with the form, which answers it with the throttle's
    // message.
    if (error instanceof ThrottledError || error instanceof ThrottleBusyError) {
      return { clear: false }
    }
    throw error
  }
  let record: SessionRecord | undefined
  try {
    record = SESSION_VALUE.test(cookie)
      ? await deps.sessions.findSession(tenant.name, sha256Hex(cookie))
      : undefined
  } catch (error) {
    await settleAttempt(hold, [key], { fail: [], clear: [] }, deps).catch(() => undefined)
    throw error
  }
  if (!isLiveSession(record, tenant, deps.clock())) {
    await settleAttempt(hold, [key], { fail: [key], clear: [] }, deps)
    return { clear: true }
  }
  await settleAttempt(hold, [key], { fail: [], clear: [] }, deps)
  return { session: record, clear: false }
}

/**
 * Starts the session of a login: a new cookie value every time (a value planted before the login
 * is never adopted: session fixation), replacing the session the browser held, in one store call.
 * The same user signing in again in the same browser keeps the session's `sid`, so that a logout
 * ends what every one of those sign-ins started.
 */
export async function startSession(
  user: AuthenticatedUser,
  previousCookie: string | undefined,
  tenant: TenantContext,
  deps: Pick<GrantDeps, 'sessions' | 'sessionTtlSeconds' | 'clock' | 'randomId'>,
): Promise<{ session: SessionRecord; cookie: SessionCookie }> {
  const now = deps.clock()
  const previous =
    previousCookie !== undefined && SESSION_VALUE.test(previousCookie)
      ? await deps.sessions.findSession(tenant.name, sha256Hex(previousCookie))
      : undefined
  const sameUser = isLiveSession(previous, tenant, now) && previous.sub === user.sub
  const value = randomToken()
  const session: SessionRecord = {
    idHash: sha256Hex(value),
    tenant: tenant.name,
    sid: sameUser ? previous.sid : deps.randomId(),
    sub: user.sub,
    claims: user.claims ?? {},
    authTime: now,
    createdAt: now,
    expiresAt: now + deps.sessionTtlSeconds * 1000,
  }
  await deps.sessions.createSession(
    session,
    previous?.tenant === tenant.name ? previous.idHash : undefined,
  )
  return { session, cookie: { value, expiresAt: session.expiresAt } }
}
