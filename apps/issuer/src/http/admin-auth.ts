import { createHash, timingSafeEqual } from 'node:crypto'
import type { Context } from 'koa'
import { ProblemError } from './problem.js'

/** Failed admin authentications an address may make per window before it is answered 429. */
export const ADMIN_MAX_FAILURES = 20
/** The window of {@link ADMIN_MAX_FAILURES}. */
export const ADMIN_FAILURE_WINDOW_MS = 60_000
/**
 * Addresses remembered at once. Past it, the oldest are forgotten: an attacker with many
 * addresses gains a few more guesses, but memory stays bounded (and guessing a 32-character
 * token is hopeless anyway; the limit keeps the log and the CPU quiet).
 */
const MAX_TRACKED_ADDRESSES = 10_000

const CHALLENGE = 'Bearer realm="tessera-admin"'
// RFC 6750 §2.1: the scheme is case-insensitive (RFC 9110 §11.1), then one or more spaces.
const BEARER = /^bearer +(\S+)$/i

export interface AdminAuthOptions {
  /** ADMIN_TOKEN. */
  token: string
  /** Clock, epoch milliseconds. */
  now: () => number
  maxFailures?: number
  windowMs?: number
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

/**
 * Checks `Authorization: Bearer <ADMIN_TOKEN>` (RFC 6750 §2.1). Both sides are hashed first, so
 * `timingSafeEqual` compares equal lengths and the time taken tells nothing about the token,
 * not even its length. Failures are counted per client address in a fixed window, in this
 * process only; past the limit every failing attempt from that address gets 429 with
 * Retry-After until the window ends. The right token is always accepted: others behind the
 * same address (a NAT, a proxy) cannot lock the operator out, and a token of 32 characters
 * cannot be guessed at any rate a lockout would slow; the limit keeps scanners from filling the
 * log.
 *
 * @returns a function that throws {@link ProblemError} 401 (with `WWW-Authenticate: Bearer`) or
 * 429, and returns when the request carries the token
 */
export function createAdminAuthenticator(options: AdminAuthOptions): (ctx: Context) => void {
  const expected = digest(options.token)
  const maxFailures = options.maxFailures ?? ADMIN_MAX_FAILURES
  const windowMs = options.windowMs ?? ADMIN_FAILURE_WINDOW_MS
  const failures = new Map<string, { count: number; resetAt: number }>()

  // Each new window is (re)inserted at the end, so the Map's order is the order of `resetAt`:
  // expired windows are at the front, and forgetting costs only what it forgets.
  const forget = (now: number): void => {
    for (const [address, entry] of failures) {
      if (entry.resetAt > now && failures.size < MAX_TRACKED_ADDRESSES) break
      failures.delete(address)
    }
  }

  const fail = (address: string, now: number, challenge: string, detail: string): never => {
    let entry = failures.get(address)
    if (entry === undefined || entry.resetAt <= now) {
      failures.delete(address)
      forget(now)
      entry = { count: 0, resetAt: now + windowMs }
      failures.set(address, entry)
    }
    entry.count++
    throw new ProblemError(401, detail, { 'WWW-Authenticate': challenge })
  }

  return (ctx) => {
    const now = options.now()
    const address = ctx.ip
    const header = ctx.get('Authorization')
    const match = BEARER.exec(header)
    if (match !== null && timingSafeEqual(digest(match[1] ?? ''), expected)) return
    const entry = failures.get(address)
    if (entry !== undefined && entry.resetAt > now && entry.count >= maxFailures) {
      const seconds = Math.max(1, Math.ceil((entry.resetAt - now) / 1000))
      throw new ProblemError(
        429,
        `too many failed authentications from this address; retry in ${seconds} seconds`,
        { 'Retry-After': `${seconds}` },
      )
    }
    if (header === '') {
      // RFC 6750 §3.1: no credentials at all gets the bare challenge, no error code.
      fail(
        address,
        now,
        CHALLENGE,
        'an Authorization: Bearer header with the admin token is required',
      )
    }
    if (match === null) {
      fail(
        address,
        now,
        `${CHALLENGE}, error="invalid_request"`,
        'the Authorization header must be "Bearer" followed by the admin token',
      )
    }
    fail(address, now, `${CHALLENGE}, error="invalid_token"`, 'the admin token is not valid')
  }
}
