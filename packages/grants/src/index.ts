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
export type {
  ClientAuthFailure,
  ClientAuthFailureReason,
  OAuthErrorCode,
  OAuthErrorOptions,
  ProviderFailureCode,
} from './errors.js'
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
  MAX_STATE_LENGTH,
  MAX_NONCE_LENGTH,
  MAX_LOGIN_HINT_LENGTH,
  PROMPT_VALUES,
} from './authorize.js'
export { resumeSession } from './single-sign-on.js'
export { beginLogin, completeLogin } from './login-form.js'
export { MAX_CODES_PER_SESSION_AND_CLIENT } from './internal/issue-code.js'
export type { AuthorizationRequest, AuthorizeOutcome, OpenIdRequest, Prompt } from './authorize.js'
export type { BrowserSession, SessionOutcome } from './single-sign-on.js'
export type { LoginForm, BeginLoginOptions, LoginOutcome, LoginSubmission } from './login-form.js'
export type { SignIn } from './access-token.js'
export {
  EMAIL_CLAIMS,
  hasOpenIdScope,
  ID_TOKEN_CLAIMS,
  PROFILE_CLAIMS,
  releasedClaims,
} from './openid/claims.js'
export { accessTokenHash, issueIdToken } from './openid/id-token.js'
export type { IdTokenInput } from './openid/id-token.js'
export { isLiveSession } from './openid/session.js'
export type { SessionCookie } from './openid/session.js'
export { ID_TOKEN_MARKERS, userInfo } from './openid/userinfo.js'
export { logout } from './openid/logout.js'
export type { LogoutOutcome } from './openid/logout.js'
export { revokeToken } from './revocation.js'
export { introspectToken } from './introspection.js'
export type { IntrospectionResponse } from './introspection.js'
export { checkPasswordThrottled, ThrottledError, ThrottleBusyError } from './throttle.js'
export type { ThrottleCause } from './throttle.js'
export type { PasswordAttempt } from './throttle.js'
export { isCodeVerifier, isS256Challenge, verifyS256 } from './pkce.js'
export { randomToken, sha256Hex } from './crypto.js'
export type {
  TenantContext,
  GrantDeps,
  ClientAuthPolicy,
  ThrottlePolicy,
  TokenResponse,
} from './context.js'
export type {
  ThrottleStore,
  ThrottleWindow,
  FailureCounter,
  FailureLimit,
  FailureRecord,
  FailureWindow,
  Reservation,
  ThrottleLimit,
  ReservationTerms,
  Settlement,
  AuthenticatedUser,
  UserAuthenticator,
  ClientKeys,
  Clock,
  AuthorizationCodeRecord,
  AuthorizationCodeStore,
  SaveCodeOptions,
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
