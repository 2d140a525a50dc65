import type { OAuthErrorCode } from '@tessera/grants'

/**
 * The one place where OAuth error codes become HTTP statuses (RFC 6749 §5.2: 400, except
 * `invalid_client`, which is 401). An `OAuthError` `temporarily_unavailable` is how password
 * throttling reaches the client: 429 with `Retry-After`. A server that cannot answer now (the
 * database, a provider script past PROVIDER_TIMEOUT_MS) raises a typed error of its own instead,
 * which `respondWithError` answers with the same code as 503.
 */
export const OAUTH_STATUS: Readonly<Record<OAuthErrorCode, number>> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  access_denied: 400,
  unsupported_response_type: 400,
  unsupported_token_type: 400,
  temporarily_unavailable: 429,
  server_error: 500,
  login_required: 400,
  consent_required: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  invalid_token: 401,
  insufficient_scope: 403,
}
