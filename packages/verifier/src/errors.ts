/**
 * The stable codes a {@link VerifierError} carries. Switch on them; the messages may change.
 *
 * - `ERR_TOKEN_MISSING`: the request carries no bearer token (no `Authorization` header, or
 *   another scheme such as `Basic`).
 * - `ERR_AUTHORIZATION_INVALID`: the `Authorization: Bearer` header is malformed (empty token,
 *   extra parts, characters outside RFC 6750's `b64token`).
 * - `ERR_TOKEN_TOO_LONG`: longer than `maxTokenLength`; refused before decoding.
 * - `ERR_TOKEN_MALFORMED`: not a compact JWS of three segments with JSON object header and
 *   payload, or a header this verifier refuses (`crit`, `b64`, `jku`, `jwk`, `x5u`, `x5c`, a
 *   missing or malformed `kid` on RS256).
 * - `ERR_ALG_NOT_ALLOWED`: `alg` is missing, `none`, or not in `algorithms` (an HS256 token
 *   at a verifier without `secret` says that HS256 needs the secret).
 * - `ERR_ISSUER_UNKNOWN`: `iss` is not one of the configured issuers.
 * - `ERR_KID_UNKNOWN`: the issuer's current key set has no key with this `kid`.
 * - `ERR_TOKEN_INVALID`: the signature does not verify.
 * - `ERR_TOKEN_EXPIRED`: `exp` is past, beyond `clockTolerance`.
 * - `ERR_CLAIM_INVALID`: another claim check failed: `exp` missing, `nbf` or `iat` in the future,
 *   `aud` not accepted, `scope` not a string, or the token is an OpenID Connect ID token (it
 *   carries `nonce`, `at_hash` or `azp`). {@link VerifierError.claim} names the claim.
 * - `ERR_JWKS_UNAVAILABLE`: no usable signing keys for the issuer (it is unreachable and nothing
 *   cached is young enough); rendered as 503 with `Retry-After`.
 * - `ERR_INSUFFICIENT_SCOPE`: the token lacks a scope the route requires.
 * - `ERR_DPOP_REQUIRED`: a DPoP-bound token (`cnf.jkt`) was sent as `Bearer`, or the verifier's
 *   `dpop.required` refuses `Bearer` tokens; answered with a DPoP `invalid_token` challenge.
 * - `ERR_DPOP_NOT_BOUND`: `Authorization: DPoP` with a token that is not bound to a key.
 * - `ERR_DPOP_PROOF_INVALID`: the `DPoP` proof header is missing, repeated or malformed, or fails
 *   a check (signature, `typ`, `alg`, key, `htm`, `htu`, `ath`, `iat`, thumbprint, or a replayed
 *   `jti`); {@link VerifierError.claim} names what failed. Answered `invalid_dpop_proof`.
 * - `ERR_REPLAY_CACHE_UNAVAILABLE`: the DPoP replay cache failed or is full, so a proof cannot be
 *   checked for replay; rendered as 503 with `Retry-After`.
 */
export type VerifierErrorCode =
  | 'ERR_TOKEN_MISSING'
  | 'ERR_AUTHORIZATION_INVALID'
  | 'ERR_TOKEN_TOO_LONG'
  | 'ERR_TOKEN_MALFORMED'
  | 'ERR_ALG_NOT_ALLOWED'
  | 'ERR_ISSUER_UNKNOWN'
  | 'ERR_KID_UNKNOWN'
  | 'ERR_TOKEN_INVALID'
  | 'ERR_TOKEN_EXPIRED'
  | 'ERR_CLAIM_INVALID'
  | 'ERR_JWKS_UNAVAILABLE'
  | 'ERR_INSUFFICIENT_SCOPE'
  | 'ERR_DPOP_REQUIRED'
  | 'ERR_DPOP_NOT_BOUND'
  | 'ERR_DPOP_PROOF_INVALID'
  | 'ERR_REPLAY_CACHE_UNAVAILABLE'

/** The HTTP authentication scheme of a request's token (RFC 6750, RFC 9449 §7.1). */
export type AuthScheme = 'Bearer' | 'DPoP'

/** Extra details of a {@link VerifierError}. */
export interface VerifierErrorDetails {
  /** The underlying error, for logs; never rendered. */
  cause?: unknown
  /**
   * `ERR_CLAIM_INVALID`, `ERR_TOKEN_EXPIRED`: the claim that failed; `ERR_DPOP_PROOF_INVALID`:
   * the proof's claim or header member that failed (`htu`, `jti`, `jwk`, …).
   */
  claim?: string
  /**
   * `ERR_JWKS_UNAVAILABLE`, `ERR_REPLAY_CACHE_UNAVAILABLE`: seconds until a retry may succeed.
   */
  retryAfter?: number
  /** `ERR_INSUFFICIENT_SCOPE`: the scopes the route requires, space-separated. */
  scope?: string
  /**
   * The scheme whose challenge answers the error: `DPoP` for a request that used it, for a
   * DPoP-bound token and for the `ERR_DPOP_*` codes. Default `Bearer`.
   */
  scheme?: AuthScheme
}

/**
 * Why a token or a request was refused. `message` is written by this package for clients (no
 * token content, no stack); `cause` holds the underlying error for logs.
 *
 * @see {@link renderError} for its HTTP form.
 */
export class VerifierError extends Error {
  override readonly name = 'VerifierError' as const
  /** A stable code; see {@link VerifierErrorCode}. */
  readonly code: VerifierErrorCode
  /** The claim that failed, for `ERR_CLAIM_INVALID` and `ERR_TOKEN_EXPIRED`. */
  readonly claim: string | undefined
  /** Seconds until the keys are fetched again, for `ERR_JWKS_UNAVAILABLE`. */
  readonly retryAfter: number | undefined
  /** The required scopes, space-separated, for `ERR_INSUFFICIENT_SCOPE`. */
  readonly scope: string | undefined
  /** The scheme whose challenge answers this error; `undefined` means `Bearer`. */
  readonly scheme: AuthScheme | undefined

  /**
   * @param code - the stable code
   * @param message - a short sentence safe to show a client
   * @param details - cause, claim, retryAfter, scope or scheme
   */
  constructor(code: VerifierErrorCode, message: string, details: VerifierErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.code = code
    this.claim = details.claim
    this.retryAfter = details.retryAfter
    this.scope = details.scope
    this.scheme = details.scheme
  }
}

/** Whether `value` is a {@link VerifierError}, optionally with the given code. */
export function isVerifierError(value: unknown, code?: VerifierErrorCode): value is VerifierError {
  return value instanceof VerifierError && (code === undefined || value.code === code)
}
