import type { AuthContext } from '../auth.js'
import { VerifierError } from '../errors.js'
import type { AuthScheme } from '../errors.js'
import type { VerifierOptions } from '../options.js'
import { DEFAULT_REALM, isQuotable, isScopeToken } from '../render.js'
import { createVerifier } from '../verifier.js'
import type { Verifier } from '../verifier.js'

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/
const SPACE = 0x20

/**
 * The token of an `Authorization: Bearer` header. No header, or another scheme, is
 * `ERR_TOKEN_MISSING` (the challenge then carries no error code, RFC 6750 §3.1); an empty
 * token, extra parts or characters outside `b64token` are `ERR_AUTHORIZATION_INVALID`.
 *
 * @see RFC 6750 §2.1 (Authorization Request Header Field)
 */
export function extractBearerToken(header: string | null | undefined): string {
  const { token } = credentialsOf(header, false)
  checkB64Token(token)
  return token
}

/** The scheme and token of an `Authorization` header. */
export interface Credentials {
  scheme: AuthScheme
  token: string
}

/**
 * What follows `Bearer` (or `DPoP`, when `dpop` is true), not empty but otherwise unchecked:
 * {@link extractBearerToken} without its b64token check. Errors about a `DPoP` header carry the
 * DPoP scheme, so that its challenge answers them.
 */
export function credentialsOf(header: string | null | undefined, dpop: boolean): Credentials {
  const value = header === undefined || header === null ? '' : header.trim()
  const missing = dpop ? 'An access token is required' : 'A bearer token is required'
  if (value === '') throw new VerifierError('ERR_TOKEN_MISSING', missing)
  const space = value.indexOf(' ')
  // Auth schemes are case-insensitive (RFC 7235 §2.1).
  const name = (space === -1 ? value : value.slice(0, space)).toLowerCase()
  let scheme: AuthScheme
  if (name === 'bearer') scheme = 'Bearer'
  else if (dpop && name === 'dpop') scheme = 'DPoP'
  else throw new VerifierError('ERR_TOKEN_MISSING', missing)
  let start = space === -1 ? value.length : space + 1
  while (value.charCodeAt(start) === SPACE) start++
  const token = value.slice(start)
  if (token === '') {
    throw new VerifierError(
      'ERR_AUTHORIZATION_INVALID',
      `The ${scheme === 'Bearer' ? 'bearer' : scheme} token is empty`,
      scheme === 'Bearer' ? {} : { scheme },
    )
  }
  return { scheme, token }
}

/** Throws `ERR_AUTHORIZATION_INVALID` unless `token` is an RFC 6750 §2.1 `b64token`. */
export function checkB64Token(token: string, scheme: AuthScheme = 'Bearer'): void {
  if (!B64TOKEN.test(token)) {
    throw new VerifierError(
      'ERR_AUTHORIZATION_INVALID',
      /\s/.test(token)
        ? 'The Authorization header has too many parts'
        : `The ${scheme === 'Bearer' ? 'bearer' : scheme} token has characters RFC 6750 does not allow`,
      scheme === 'Bearer' ? {} : { scheme },
    )
  }
}

/**
 * Throws `ERR_TOKEN_MISSING` without `auth`, `ERR_INSUFFICIENT_SCOPE` when a scope lacks (in the
 * DPoP scheme for a DPoP-bound token).
 */
export function checkScopes(auth: AuthContext | undefined, required: readonly string[]): void {
  if (auth === undefined) {
    throw new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required')
  }
  if (required.some((scope) => !auth.scopes.includes(scope))) {
    throw new VerifierError('ERR_INSUFFICIENT_SCOPE', 'The token lacks a required scope', {
      scope: required.join(' '),
      ...(auth.jkt === undefined ? {} : { scheme: 'DPoP' }),
    })
  }
}

/** Checks a realm option at creation. */
export function checkRealm(realm: string | undefined, where: string): string {
  if (realm === undefined) return DEFAULT_REALM
  if (typeof realm !== 'string' || realm === '' || !isQuotable(realm)) {
    throw new TypeError(
      `${where}: options.realm must be a non-empty string of printable ASCII without " or \\`,
    )
  }
  return realm
}

/** Checks the scopes a route requires, at creation. */
export function checkRequiredScopes(scope: string | readonly string[], where: string): string[] {
  const scopes = typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [...scope]
  if (scopes.length === 0 || !scopes.every((s) => typeof s === 'string' && isScopeToken(s))) {
    throw new TypeError(`${where}: scope must name one or more RFC 6749 scope tokens`)
  }
  return scopes
}

/** A verifier, or one created from options. */
export function toVerifier(verifier: Verifier | VerifierOptions): Verifier {
  const candidate = verifier as Partial<Verifier>
  return typeof candidate.verify === 'function'
    ? (verifier as Verifier)
    : createVerifier(verifier as VerifierOptions)
}
