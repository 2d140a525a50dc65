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

/** Extra details of a {@link VerifierError}. */
export interface VerifierErrorDetails {
  /** The underlying error, for logs; never rendered. */
  cause?: unknown
  /** `ERR_CLAIM_INVALID`, `ERR_TOKEN_EXPIRED`: the claim that failed. */
  claim?: string
  /** `ERR_JWKS_UNAVAILABLE`: seconds until the next attempt to fetch the keys. */
  retryAfter?: number
  /** `ERR_INSUFFICIENT_SCOPE`: the scopes the route requires, space-separated. */
  scope?: string
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

  /**
   * @param code - the stable code
   * @param message - a short sentence safe to show a client
   * @param details - cause, claim, retryAfter or scope
   */
  constructor(code: VerifierErrorCode, message: string, details: VerifierErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.code = code
    this.claim = details.claim
    this.retryAfter = details.retryAfter
    this.scope = details.scope
  }
}

/** Whether `value` is a {@link VerifierError}, optionally with the given code. */
export function isVerifierError(value: unknown, code?: VerifierErrorCode): value is VerifierError {
  return value instanceof VerifierError && (code === undefined || value.code === code)
}
