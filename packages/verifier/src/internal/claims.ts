import { errors } from 'jose'
import { VerifierError } from '../errors.js'
import type { JsonObject } from './token.js'

/** What the claims of a token are checked against. */
export interface ClaimRules {
  /** Seconds of clock skew forgiven on `exp`, `nbf` and `iat`. */
  clockTolerance: number
  /** The accepted audiences; `undefined`: `aud` is not checked. */
  audience: readonly string[] | undefined
}

function claimInvalid(claim: string, message: string): VerifierError {
  return new VerifierError('ERR_CLAIM_INVALID', message, { claim })
}

/**
 * The claims only an OpenID Connect ID token carries (Core §2, §3.1.3.6): a token with any of
 * them tells a client who signed in and grants nothing, so it is never an access token, even
 * when the issuer's own key signed it.
 */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'azp'] as const

/**
 * Refuses an ID token, and checks `exp`, `nbf`, `iat`, `aud` and the type of `scope` at `nowMs`. Run on the unverified
 * payload first, so that a doomed token never causes a key fetch, and again once the signature
 * holds, as time may have passed during a fetch. Throws a {@link VerifierError}.
 *
 * @see RFC 7519 §4.1
 */
export function checkClaims(payload: JsonObject, nowMs: number, rules: ClaimRules): void {
  const { clockTolerance, audience } = rules
  const idTokenClaim = ID_TOKEN_CLAIMS.find((claim) => Object.hasOwn(payload, claim))
  if (idTokenClaim !== undefined) {
    throw claimInvalid(idTokenClaim, 'an ID token is not an access token')
  }
  const nowSeconds = Math.floor(nowMs / 1000)
  const { exp, nbf, iat, aud, scope } = payload
  if (typeof exp !== 'number' || !Number.isFinite(exp)) {
    throw claimInvalid('exp', 'The token has no valid exp claim')
  }
  // RFC 7519 §4.1.4: not accepted on or after exp; the tolerance absorbs clock skew.
  if (exp <= nowSeconds - clockTolerance) {
    throw new VerifierError('ERR_TOKEN_EXPIRED', 'The token has expired', { claim: 'exp' })
  }
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds + clockTolerance)) {
    throw claimInvalid('nbf', 'The token is not valid yet')
  }
  if (iat !== undefined && (typeof iat !== 'number' || iat > nowSeconds + clockTolerance)) {
    throw claimInvalid('iat', 'The token was issued in the future')
  }
  if (audience !== undefined) {
    const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : []
    if (!values.some((value) => typeof value === 'string' && audience.includes(value))) {
      throw claimInvalid('aud', 'The token aud claim is not accepted')
    }
  }
  if (scope !== undefined && typeof scope !== 'string') {
    throw claimInvalid('scope', 'The token scope claim is not a string')
  }
}

/** Maps what jose throws to our codes; messages are ours, jose's stays in `cause`. */
export function fromJose(error: unknown): VerifierError {
  if (error instanceof VerifierError) return error
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new VerifierError('ERR_TOKEN_INVALID', 'The token signature is invalid', {
      cause: error,
    })
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new VerifierError('ERR_ALG_NOT_ALLOWED', 'The token algorithm is not accepted', {
      cause: error,
    })
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JOSENotSupported) {
    return new VerifierError('ERR_TOKEN_MALFORMED', 'The token is malformed', { cause: error })
  }
  // Fail closed: whatever else went wrong, the token is not accepted.
  return new VerifierError('ERR_TOKEN_INVALID', 'The access token is invalid', { cause: error })
}
