import type { AuthContext } from '../auth.js'
import { VerifierError } from '../errors.js'
import type { AuthScheme } from '../errors.js'
import { DEFAULT_REALM } from '../render.js'
import type { RenderOptions } from '../render.js'
import type { VerifiedToken, Verifier } from '../verifier.js'
import { checkB64Token, credentialsOf, extractBearerToken } from './bearer.js'
import type { ProofRequest } from './dpop.js'
import { engineOf } from './engine.js'
import type { Engine } from './engine.js'
import { metadataOf } from './resource-metadata.js'
import { compactSegments } from './token.js'
import type { JsonObject } from './token.js'

// How to answer rides on the AuthContext under a symbol: invisible to JSON and to `in` checks
// on string keys, and cheaper than a WeakMap, whose entries weigh on every garbage collection.
const CHALLENGE: unique symbol = Symbol('@tessera/verifier challenge')

type WithChallenge = AuthContext & { [CHALLENGE]?: RenderOptions }

/** How the middleware of `verifier` answers in `realm`: realm, metadata URL, DPoP challenge. */
export function challengeOptions(verifier: Verifier, realm: string): RenderOptions {
  const metadata = metadataOf(verifier)
  const dpop = engineOf(verifier)?.dpop
  return {
    realm,
    ...(metadata === undefined ? {} : { resourceMetadata: metadata.url }),
    ...(dpop === undefined ? {} : { dpop: { required: dpop.required } }),
  }
}

/** How the middleware that verified `auth` answers (realm, metadata URL), for a later 403. */
export function challengeOf(auth: WithChallenge | undefined): RenderOptions {
  return auth?.[CHALLENGE] ?? { realm: DEFAULT_REALM }
}

/**
 * Extracts and verifies the token of a request's `Authorization` header, and with the `dpop`
 * option the proof of a DPoP-bound token: the {@link AuthContext} itself on a token cache hit of
 * a token that needs no proof, a promise of it otherwise. `request` is called only when a proof
 * is checked. Throws or rejects with a {@link VerifierError}.
 */
export type Authenticator = (
  authorization: string | null | undefined,
  request: () => ProofRequest,
) => AuthContext | Promise<AuthContext>

/** `error` answered in the `scheme` challenge, when it names none itself. */
function inScheme(error: unknown, scheme: AuthScheme): unknown {
  if (scheme === 'Bearer' || !(error instanceof VerifierError) || error.scheme !== undefined) {
    return error
  }
  const { code, message, cause, claim, retryAfter, scope } = error
  return new VerifierError(code, message, {
    scheme,
    ...(cause === undefined ? {} : { cause }),
    ...(claim === undefined ? {} : { claim }),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(scope === undefined ? {} : { scope }),
  })
}

// An RFC 7638 SHA-256 thumbprint, base64url: 43 characters.
const JKT = /^[A-Za-z0-9_-]{43}$/

/**
 * The thumbprint a token is bound to (`cnf.jkt`, RFC 9449 §6.1), or `undefined` for an unbound
 * token. A `cnf` that binds the token some other way (a certificate, RFC 8705) cannot be checked
 * here, so such a token is refused rather than accepted as a bearer token.
 */
function boundKeyOf(payload: JsonObject, scheme: AuthScheme): string | undefined {
  const cnf = payload.cnf
  if (cnf === undefined) return undefined
  const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as JsonObject).jkt : undefined
  if (typeof jkt !== 'string' || !JKT.test(jkt)) {
    throw new VerifierError('ERR_CLAIM_INVALID', 'The token is bound in a way not supported', {
      claim: 'cnf',
      scheme,
    })
  }
  return jkt
}

/** An {@link Authenticator} for the requests of one middleware, answering per `render`. */
export function createAuthenticator(verifier: Verifier, render: RenderOptions): Authenticator {
  const toAuth = (
    token: string,
    { payload, protectedHeader }: VerifiedToken,
    jkt?: string,
  ): AuthContext => {
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []
    // requireScope answers as the middleware that verified the token would.
    const auth: WithChallenge = {
      token,
      payload,
      protectedHeader,
      scopes,
      ...(jkt === undefined ? {} : { jkt }),
      [CHALLENGE]: render,
    }
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
  const { dpop } = engine
  if (dpop === undefined) {
    return (header) => {
      const { token } = credentialsOf(header, false)
      const verified = verifyToken(engine, token, 'Bearer')
      return verified instanceof Promise
        ? verified.then((result) => toAuth(token, result))
        : toAuth(token, verified)
    }
  }

  /** The token verified, checked against the scheme it came in, and its proof if bound. */
  const bind = (
    scheme: AuthScheme,
    token: string,
    verified: VerifiedToken,
    request: () => ProofRequest,
  ): AuthContext | Promise<AuthContext> => {
    const jkt = boundKeyOf(verified.payload, scheme)
    if (jkt === undefined) {
      if (scheme === 'DPoP') {
        throw new VerifierError('ERR_DPOP_NOT_BOUND', 'The access token is not DPoP-bound', {
          scheme: 'DPoP',
        })
      }
      return toAuth(token, verified)
    }
    // RFC 9449 §7.2: a bound token presented as a bearer token is refused.
    if (scheme === 'Bearer') {
      throw new VerifierError('ERR_DPOP_REQUIRED', 'The access token is DPoP-bound', {
        scheme: 'DPoP',
      })
    }
    return dpop.check(token, jkt, request()).then(() => toAuth(token, verified, jkt))
  }
  // Token refusals are counted by the engine; those of the binding and the proof here.
  const refuse = (error: unknown): never => {
    engine.refused(error)
    throw error
  }
  const bindCounted = (
    scheme: AuthScheme,
    token: string,
    verified: VerifiedToken,
    request: () => ProofRequest,
  ): AuthContext | Promise<AuthContext> => {
    try {
      const auth = bind(scheme, token, verified, request)
      return auth instanceof Promise ? auth.catch(refuse) : auth
    } catch (error) {
      return refuse(error)
    }
  }

  return (header, request) => {
    const { scheme, token } = credentialsOf(header, true)
    // With `required`, no bearer token is looked at.
    if (dpop.required && scheme === 'Bearer') {
      refuse(
        new VerifierError('ERR_DPOP_REQUIRED', 'This API accepts DPoP-bound tokens only', {
          scheme: 'DPoP',
        }),
      )
    }
    let verified: VerifiedToken | Promise<VerifiedToken>
    try {
      verified = verifyToken(engine, token, scheme)
    } catch (error) {
      throw inScheme(error, scheme)
    }
    if (!(verified instanceof Promise)) return bindCounted(scheme, token, verified, request)
    return verified.then(
      (result) => bindCounted(scheme, token, result, request),
      (error: unknown) => {
        throw inScheme(error, scheme)
      },
    )
  }
}

/**
 * The token verified through the engine: the cached result itself on a hit, a promise on a miss
 * (whose refusals the engine counts). Throws `ERR_AUTHORIZATION_INVALID` for a token outside
 * RFC 6750's `b64token`.
 */
function verifyToken(
  engine: Engine,
  token: string,
  scheme: AuthScheme,
): VerifiedToken | Promise<VerifiedToken> {
  const cacheKey = engine.cacheKeyOf(token)
  if (cacheKey !== undefined) {
    // A hit is a token verified before, so a b64token as well: the check below is only
    // needed on a miss, where it still comes before the verifier sees the token.
    const hit = engine.cachedResult(cacheKey)
    if (hit !== undefined) return hit
  }
  // One scan for two checks: a compact JWS is a b64token (RFC 6750 §2.1), and the engine then
  // takes the segments as they are.
  const segments = compactSegments(token)
  if (segments === undefined) checkB64Token(token, scheme)
  return engine.verifyUncached(token, cacheKey, segments)
}
