import type { AuthContext } from '../auth.js'
import { VerifierError } from '../errors.js'
import type { VerifierOptions } from '../options.js'
import { DEFAULT_REALM, isQuotable, isScopeToken } from '../render.js'
import type { RenderOptions } from '../render.js'
import { createVerifier } from '../verifier.js'
import type { VerifiedToken, Verifier } from '../verifier.js'
import { engineOf } from './engine.js'
import { metadataOf } from './resource-metadata.js'
import { compactSegments } from './token.js'

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
  const token = bearerCredentials(header)
  checkB64Token(token)
  return token
}

/**
 * What follows `Bearer`, not empty but otherwise unchecked: {@link extractBearerToken} without
 * its b64token check.
 */
function bearerCredentials(header: string | null | undefined): string {
  const value = header === undefined || header === null ? '' : header.trim()
  if (value === '') {
    throw new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required')
  }
  const space = value.indexOf(' ')
  const scheme = space === -1 ? value : value.slice(0, space)
  // Auth schemes are case-insensitive (RFC 7235 §2.1).
  if (scheme.toLowerCase() !== 'bearer') {
    throw new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required')
  }
  let start = space === -1 ? value.length : space + 1
  while (value.charCodeAt(start) === SPACE) start++
  const token = value.slice(start)
  if (token === '') {
    throw new VerifierError('ERR_AUTHORIZATION_INVALID', 'The bearer token is empty')
  }
  return token
}

function checkB64Token(token: string): void {
  if (!B64TOKEN.test(token)) {
    throw new VerifierError(
      'ERR_AUTHORIZATION_INVALID',
      /\s/.test(token)
        ? 'The Authorization header has too many parts'
        : 'The bearer token has characters RFC 6750 does not allow',
    )
  }
}

// How to answer rides on the AuthContext under a symbol: invisible to JSON and to `in` checks
// on string keys, and cheaper than a WeakMap, whose entries weigh on every garbage collection.
const CHALLENGE: unique symbol = Symbol('@tessera/verifier challenge')

type WithChallenge = AuthContext & { [CHALLENGE]?: RenderOptions }

/** How the middleware of `verifier` answers in `realm`: the realm and the metadata URL. */
export function challengeOptions(verifier: Verifier, realm: string): RenderOptions {
  const metadata = metadataOf(verifier)
  return metadata === undefined ? { realm } : { realm, resourceMetadata: metadata.url }
}

/**
 * Extracts and verifies the bearer token of a request's `Authorization` header: the
 * {@link AuthContext} itself on a token cache hit, a promise of it otherwise. Throws or rejects
 * with a {@link VerifierError}.
 */
export type Authenticator = (
  header: string | null | undefined,
) => AuthContext | Promise<AuthContext>

/** An {@link Authenticator} for the requests of one middleware, answering per `render`. */
export function createAuthenticator(verifier: Verifier, render: RenderOptions): Authenticator {
  const toAuth = (token: string, { payload, protectedHeader }: VerifiedToken): AuthContext => {
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []
    // requireScope answers as the bearer middleware that verified the token would.
    const auth: WithChallenge = { token, payload, protectedHeader, scopes, [CHALLENGE]: render }
    return auth
  }
  const engine = engineOf(verifier)
  if (engine === undefined) {
    // A verifier made elsewhere: only its public face, whatever it returns.
    return async (header) => {
      const token = extractBearerToken(header)
      return toAuth(token, await verifier.verify(token))
    }
  }
  return (header) => {
    const token = bearerCredentials(header)
    const cacheKey = engine.cacheKeyOf(token)
    if (cacheKey !== undefined) {
      // A hit is a token verified before, so a b64token as well: the check below is only
      // needed on a miss, where it still comes before the verifier sees the token.
      const hit = engine.cachedResult(cacheKey)
      if (hit !== undefined) return toAuth(token, hit)
    }
    // One scan for two checks: a compact JWS is a b64token (RFC 6750 §2.1), and the engine then
    // takes the segments as they are.
    const segments = compactSegments(token)
    if (segments === undefined) checkB64Token(token)
    return engine
      .verifyUncached(token, cacheKey, segments)
      .then((verified) => toAuth(token, verified))
  }
}

/** How the middleware that verified `auth` answers (realm, metadata URL), for a later 403. */
export function challengeOf(auth: WithChallenge | undefined): RenderOptions {
  return auth?.[CHALLENGE] ?? { realm: DEFAULT_REALM }
}

/** Throws `ERR_TOKEN_MISSING` without `auth`, `ERR_INSUFFICIENT_SCOPE` when a scope lacks. */
export function checkScopes(auth: AuthContext | undefined, required: readonly string[]): void {
  if (auth === undefined) {
    throw new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required')
  }
  if (required.some((scope) => !auth.scopes.includes(scope))) {
    throw new VerifierError('ERR_INSUFFICIENT_SCOPE', 'The token lacks a required scope', {
      scope: required.join(' '),
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
