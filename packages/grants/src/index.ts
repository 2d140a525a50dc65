/**
 * @tessera/grants — the token-endpoint core: request parsing, client authentication, the
 * grants, scope narrowing and access-token minting. Framework-free: it knows no HTTP.
 *
 * @module
 */
export {
  ClientKeysUnavailableError,
  OAuthError,
  OAUTH_ERROR_CODES,
  ProviderFailureError,
} from './errors.js'
export type { OAuthErrorCode, OAuthErrorOptions, ProviderFailureCode } from './errors.js'
export { parseTokenRequestBody } from './request.js'
export type { TokenParams } from './request.js'
export { authenticateClient, isConfidentialClient } from './client-auth.js'
export type {
  AuthenticatedClient,
  ClientAuthDeps,
  ClientAuthMethod,
  ClientAuthRequest,
} from './client-auth.js'
export {
  CLIENT_ASSERTION_CLOCK_TOLERANCE_SECONDS,
  CLIENT_ASSERTION_TYPE,
  MAX_CLIENT_ASSERTION_LIFETIME_SECONDS,
  verifyClientAssertion,
} from './client-assertion.js'
export type { ClientAssertionCheck } from './client-assertion.js'
export { narrowScope } from './scope.js'
export { issueAccessToken, issueTokenResponse, RESERVED_CLAIMS } from './access-token.js'
export type { AccessTokenInput, IssuedAccessToken } from './access-token.js'
export { handleTokenRequest } from './token-endpoint.js'
export type { TokenRequestInput } from './token-endpoint.js'
export { passwordGrant } from './password.js'
export { clientCredentialsGrant } from './client-credentials.js'
export { authorizationCodeGrant } from './authorization-code.js'
export { refreshTokenGrant } from './refresh-token.js'
export {
  parseAuthorizationRequest,
  beginLogin,
  completeLogin,
  MAX_STATE_LENGTH,
} from './authorize.js'
export type {
  AuthorizationRequest,
  AuthorizeOutcome,
  LoginForm,
  LoginOutcome,
  LoginSubmission,
} from './authorize.js'
export { revokeToken } from './revocation.js'
export { introspectToken } from './introspection.js'
export type { IntrospectionResponse } from './introspection.js'
export { checkPasswordThrottled } from './throttle.js'
export type { PasswordAttempt } from './throttle.js'
export { isCodeVerifier, isS256Challenge, verifyS256 } from './pkce.js'
export { randomToken, sha256Hex } from './crypto.js'
export type { TenantContext, GrantDeps, ThrottlePolicy, TokenResponse } from './context.js'
export type {
  ThrottleStore,
  ThrottleWindow,
  Reservation,
  ThrottleLimit,
  HeldAttempt,
  Settlement,
  AuthenticatedUser,
  UserAuthenticator,
  ClientKeys,
  Clock,
  AuthorizationCodeRecord,
  AuthorizationCodeStore,
  RefreshFamily,
  RefreshTokenRecord,
  RefreshTokenStore,
  RotateResult,
  FamilyIssue,
  MarkStore,
  SecretStore,
  SessionRecord,
  SessionStore,
  ExpiryStore,
} from './ports.js'
