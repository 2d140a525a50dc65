import { authenticateClient } from './client-auth.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { OAuthError } from './errors.js'
import { authorizationCodeGrant } from './authorization-code.js'
import { clientCredentialsGrant } from './client-credentials.js'
import { passwordGrant } from './password.js'
import { refreshTokenGrant } from './refresh-token.js'
import type { TokenParams } from './request.js'

/** One token request as the HTTP edge hands it over. */
export interface TokenRequestInput {
  params: TokenParams
  /** The raw `Authorization` header, if any. */
  authorization: string | undefined
  /** The client's network address, for throttling. */
  address: string
}

const KNOWN_GRANTS = new Set([
  'authorization_code',
  'refresh_token',
  'password',
  'client_credentials',
])

/**
 * The token endpoint: checks `grant_type`, authenticates the client, then runs the grant.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.2
 */
export async function handleTokenRequest(
  input: TokenRequestInput,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<TokenResponse> {
  const grantType = input.params.grant_type
  if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required')
  if (!KNOWN_GRANTS.has(grantType)) {
    throw new OAuthError('unsupported_grant_type', 'unsupported grant_type')
  }
  const authenticated = await authenticateClient(
    {
      params: input.params,
      authorization: input.authorization,
      endpoint: 'token',
      address: input.address,
    },
    tenant,
    deps,
  )
  const { client } = authenticated
  switch (grantType) {
    case 'authorization_code':
      return authorizationCodeGrant(input.params, client, tenant, deps)
    case 'refresh_token':
      return refreshTokenGrant(input.params, client, tenant, deps)
    case 'client_credentials':
      return clientCredentialsGrant(input.params, authenticated, tenant, deps)
    default:
      return passwordGrant(input.params, client, input.address, tenant, deps)
  }
}
