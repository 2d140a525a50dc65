/**
 * @tessera/grants — the token-endpoint core: request parsing, client authentication, the
 * grants, the authorization endpoint's decisions and the OpenID Connect endpoints. Framework-free:
 * it knows no HTTP. The issuer composes it with Koa; the store implements its ports.
 *
 * @module
 */

// Errors the issuer maps to HTTP answers.
export { ClientKeysUnavailableError, OAuthError, ProviderFailureError } from './errors.js'
export type { OAuthErrorCode } from './errors.js'
export { ThrottleBusyError } from './throttle.js'

// POST /token
export { parseTokenRequestBody } from './request.js'
export { authenticateClient } from './client-auth.js'
export { handleTokenRequest } from './token-endpoint.js'
export { RESERVED_CLAIMS } from './access-token.js'
export type { TokenDpopInput } from './token-endpoint.js'

// DPoP (RFC 9449)
export { DPOP_SIGNING_ALGORITHMS, verifyDpopProof } from './dpop/proof.js'
export type { DpopProof, DpopRequest } from './dpop/proof.js'
export { currentDpopNonce } from './dpop/nonce.js'

// GET /authorize and the login form
export { parseAuthorizationRequest, PROMPT_VALUES } from './authorize.js'
export type { AuthorizationRequest } from './authorize.js'
export { resumeSession } from './single-sign-on.js'
export { beginLogin, completeLogin } from './login-form.js'
export type { BeginLoginOptions, LoginOutcome } from './login-form.js'
export type { ConsentUser } from './consent.js'
export { MAX_CODES_PER_SESSION_AND_CLIENT } from './internal/issue-code.js'

// OpenID Connect: the claims, the userinfo and logout endpoints
export { EMAIL_CLAIMS, ID_TOKEN_CLAIMS, PROFILE_CLAIMS } from './openid/claims.js'
export type { SessionCookie } from './openid/session.js'
export { userInfo } from './openid/userinfo.js'
export type { UserInfoPresentation } from './openid/userinfo.js'
export { sessionUserName } from './openid/loopback-consent.js'
export { logout } from './openid/logout.js'

// POST /revoke and POST /introspect
export { revokeToken } from './revocation.js'
export { introspectToken } from './introspection.js'

// What the issuer passes into every call
export type { TenantContext, GrantDeps } from './context.js'

// The ports: the issuer provides the user authenticator, client keys and clock; the store
// implements the rest.
export type {
  AuthenticatedUser,
  UserAuthenticator,
  ClientKeys,
  Clock,
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
export type {
  ClientRegistrationStore,
  ConsentRecord,
  ConsentStore,
  DynamicClientSource,
  RegisteredClientRecord,
} from './dynamic-ports.js'
export { findClient } from './client-lookup.js'

// Dynamic client registration (RFC 7591) and its management (RFC 7592)
export {
  admitRegistration,
  deleteRegistration,
  parseRegistrationBody,
  readRegistration,
  registerClient,
  updateRegistration,
} from './registration/registration.js'
export type {
  ClientInformation,
  RegistrationAdmission,
  RegistrationDeps,
  RegistrationManagementRequest,
  RegistrationTenant,
} from './registration/registration.js'
export { REGISTRATIONS_PER_ADDRESS, REGISTRATION_WINDOW_MS } from './registration/admission.js'
export type { RegistrationRateDeps } from './registration/admission.js'
export { parseClientMetadata, MAX_REDIRECT_URIS } from './registration/metadata.js'
export type { ClientMetadata } from './registration/metadata.js'
export { registeredClient } from './registration/registered-client.js'
