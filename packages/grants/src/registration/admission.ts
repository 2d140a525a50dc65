/**
 * Who may call the registration endpoints: the throttle of registrations per address, the
 * initial access token of POST /register and the registration access token of RFC 7592.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto'
import { sha256, sha256Hex } from '../crypto.js'
import { OAuthError } from '../errors.js'
import type { Clock, FailureCounter } from '../ports.js'
import { addressBucket } from '../throttle-address.js'

/** Registrations one address may ask for in one window. */
export const REGISTRATIONS_PER_ADDRESS = 20
/** The window of {@link REGISTRATIONS_PER_ADDRESS}, in milliseconds. */
export const REGISTRATION_WINDOW_MS = 60_000

// RFC 6750 §2.1: b64token after the scheme, which is case-insensitive.
const BEARER = /^bearer +([\w.~+/-]+=*) *$/i

/** The token of an `Authorization: Bearer` header; undefined for none or another scheme. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined
  return BEARER.exec(authorization)?.[1]
}

/** A 401 `invalid_token` with its `WWW-Authenticate: Bearer` challenge (RFC 6750 §3). */
export function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, { challenge: 'Bearer' })
}

/** Whether `presented` hashes to `expectedHash` (SHA-256, hex), in constant time. */
export function tokenMatchesHash(presented: string, expectedHash: string): boolean {
  const expected = Buffer.from(expectedHash, 'hex')
  const actual = sha256(presented)
  return expected.length === actual.length && timingSafeEqual(actual, expected)
}

/**
 * Checks the initial access token (`registration_token`) of a POST /register, when the tenant
 * requires one: compared as SHA-256 digests in constant time, so neither its length nor where
 * it differs shows in the time taken.
 *
 * @throws OAuthError `invalid_token` (401, Bearer challenge) when it is missing or wrong
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-3
 */
export function checkInitialAccessToken(
  authorization: string | undefined,
  required: string | undefined,
): void {
  if (required === undefined) return
  const token = bearerToken(authorization)
  if (token === undefined) {
    throw invalidToken('this server requires an initial access token: Authorization: Bearer')
  }
  if (!tokenMatchesHash(token, sha256Hex(required))) {
    throw invalidToken('the initial access token is not valid')
  }
}

/** What the registration throttle needs. */
export interface RegistrationRateDeps {
  /**
   * The counter of registration requests, shared by every replica: the store's client
   * authentication failure counter, under keys of its own (`register:` + a hash of the address).
   */
  rate: FailureCounter
  clock: Clock
}

/**
 * Counts one registration request from `address` (per IPv4 address, per IPv6 /64, across
 * tenants); past {@link REGISTRATIONS_PER_ADDRESS} in a window of
 * {@link REGISTRATION_WINDOW_MS} it is refused, counting nothing. Every request counts, a
 * refused or malformed one too, so that neither guesses of an initial access token nor a flood
 * of bad metadata go faster than registrations.
 *
 * @throws OAuthError `temporarily_unavailable` (429 with Retry-After) past the limit
 */
export async function countRegistration(
  address: string,
  deps: RegistrationRateDeps,
): Promise<void> {
  const now = deps.clock()
  const key = `register:${sha256Hex(addressBucket(address))}`
  const record = await deps.rate.recordFailure([{ key, limit: REGISTRATIONS_PER_ADDRESS }], {
    now,
    windowMs: REGISTRATION_WINDOW_MS,
  })
  if (!record.recorded) {
    throw new OAuthError(
      'temporarily_unavailable',
      `too many registrations from this address (at most ${REGISTRATIONS_PER_ADDRESS} a minute); try again later`,
      { retryAfterSeconds: Math.max(1, Math.ceil((record.resetAt - now) / 1000)) },
    )
  }
}
