/**
 * RFC 6749 §5.2 error codes; the authorization endpoint's (§4.1.2.1: `access_denied`,
 * `unsupported_response_type`, `temporarily_unavailable`, the last also used for brute-force
 * throttling); RFC 7009's `unsupported_token_type`; `server_error`; OpenID Connect Core
 * §3.1.2.6's `login_required`, `consent_required`, `request_not_supported` and
 * `request_uri_not_supported`; and RFC 6750 §3.1's `invalid_token` and `insufficient_scope`
 * (UserInfo); RFC 8707 §2's `invalid_target`; RFC 7591 §3.2.2's `invalid_redirect_uri` and
 * `invalid_client_metadata` (dynamic client registration).
 */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'unsupported_response_type',
  'unsupported_token_type',
  'temporarily_unavailable',
  'server_error',
  'login_required',
  'consent_required',
  'request_not_supported',
  'request_uri_not_supported',
  'invalid_token',
  'insufficient_scope',
  'invalid_target',
  'invalid_redirect_uri',
  'invalid_client_metadata',
] as const

export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number]

/** Why a client failed to authenticate at /token, /revoke or /introspect, for the log. */
export type ClientAuthFailureReason =
  | 'unknown_client'
  | 'wrong_secret'
  | 'missing_secret'
  | 'unexpected_secret'
  | 'wrong_method'
  | 'malformed_basic'
  | 'bad_assertion'
  /** Refused unchecked: a failure count of the client or the address is full. */
  | 'throttled'

/** A failed or refused client authentication, as the edge logs it; never holds a credential. */
export interface ClientAuthFailure {
  /** The client_id as sent (Basic: form-decoded), when the request named one. */
  clientId: string | undefined
  endpoint: 'token' | 'revoke' | 'introspect'
  reason: ClientAuthFailureReason
  /** Which check failed, in words safe to log (a bad assertion's broken rule). */
  detail: string
}

export interface OAuthErrorOptions {
  /** Internal detail for logs; never sent to the client. */
  cause?: unknown
  /** Seconds until a throttled request may be retried. */
  retryAfterSeconds?: number
  /**
   * The `WWW-Authenticate` challenge the answer carries: `Basic` when a failed client
   * authentication used HTTP Basic (RFC 6749 §5.2); `Bearer` for an `invalid_token` answer to a
   * bearer-token request (RFC 6750 §3, e.g. a registration access token, RFC 7592 §2).
   */
  challenge?: 'Basic' | 'Bearer'
  /** Set when the error is a failed or refused client authentication. */
  clientAuthFailure?: ClientAuthFailure
}

/**
 * The one error the grants throw. `description` is safe to show a client.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.2
 */
export class OAuthError extends Error {
  override readonly name = 'OAuthError'
  readonly code: OAuthErrorCode
  readonly description: string
  readonly retryAfterSeconds: number | undefined
  readonly challenge: 'Basic' | 'Bearer' | undefined
  readonly clientAuthFailure: ClientAuthFailure | undefined

  constructor(code: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    super(`${code}: ${description}`, { cause: options.cause })
    this.code = code
    this.description = description
    this.retryAfterSeconds = options.retryAfterSeconds
    this.challenge = options.challenge
    this.clientAuthFailure = options.clientAuthFailure
  }
}

/** Why a provider script could not give an answer. */
export type ProviderFailureCode =
  /** It did not answer within PROVIDER_TIMEOUT_MS: the service behind it may come back. */
  | 'ERR_PROVIDER_TIMEOUT'
  /** It threw, or answered something other than `{ sub, claims? }` or null: a bug to fix. */
  | 'ERR_PROVIDER_FAILED'

/**
 * A provider script that failed, as the user authenticator reports it. Neither the username nor
 * the password is in `reason` or `message`, so the error can be logged as it is; the edge turns
 * it into 503 (timeout) or 500 (failure).
 */
export class ProviderFailureError extends Error {
  override readonly name = 'ProviderFailureError'
  readonly code: ProviderFailureCode
  /** The provider script, as configured (its file). */
  readonly provider: string
  /** What went wrong, for the log. */
  readonly reason: string

  constructor(code: ProviderFailureCode, provider: string, reason: string) {
    super(`provider ${provider}: ${reason}`)
    this.code = code
    this.provider = provider
    this.reason = reason
  }
}

/**
 * The key set of a `private_key_jwt` client could not be had: its `jwks_uri` has not answered
 * with a usable JWK Set, and no earlier one is kept. The client is not at fault, so the edge
 * answers 503 `temporarily_unavailable` with `Retry-After` rather than `invalid_client`.
 */
export class ClientKeysUnavailableError extends Error {
  override readonly name = 'ClientKeysUnavailableError'
  readonly clientId: string
  /** Seconds until the key set will be fetched again. */
  readonly retryAfterSeconds: number

  constructor(clientId: string, retryAfterSeconds: number, options: { cause?: unknown } = {}) {
    super(`the keys of client ${clientId} are unavailable`, options)
    this.clientId = clientId
    this.retryAfterSeconds = retryAfterSeconds
  }
}
