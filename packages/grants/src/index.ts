/**
 * @tessera/grants — the token-endpoint core: request parsing, client authentication, the
 * grants, scope narrowing and access-token minting. Framework-free: it knows no HTTP.
 *
 * @module
 */
export { OAuthError, OAUTH_ERROR_CODES } from './errors.js'
export type { OAuthErrorCode, OAuthErrorOptions } from './errors.js'
export { parseTokenRequestBody } from './request.js'
export type { TokenParams } from './request.js'
export { authenticateClient } from './client-auth.js'
export type { AuthenticatedClient, ClientAuthMethod } from './client-auth.js'
export { narrowScope } from './scope.js'
export { issueAccessToken, RESERVED_CLAIMS } from './access-token.js'
export type { AccessTokenInput, IssuedAccessToken } from './access-token.js'
export { handleTokenRequest } from './token-endpoint.js'
export type { TokenRequestInput } from './token-endpoint.js'
export { passwordGrant } from './password.js'
export type { TenantContext, GrantDeps, ThrottlePolicy, TokenResponse } from './context.js'
export type {
  ThrottleStore,
  FailureCount,
  AuthenticatedUser,
  UserAuthenticator,
  Clock,
} from './ports.js'
