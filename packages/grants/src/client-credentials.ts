import { issueTokenResponse } from './access-token.js'
import type { AuthenticatedClient } from './client-auth.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { OAuthError } from './errors.js'
import type { TokenParams } from './request.js'
import { audienceOf, scopesForResource, tokenResource } from './resource.js'
import { narrowScope } from './scope.js'

/**
 * Parameters of the other grants. Sent along with client_credentials they are refused rather
 * than ignored: a client that sends a user's password or a refresh token here expects a token
 * about that user or that sign-in, and would get one about itself instead.
 */
const OTHER_GRANTS_PARAMS = [
  'username',
  'password',
  'refresh_token',
  'code',
  'code_verifier',
  'redirect_uri',
] as const

/**
 * The client credentials grant: a confidential client that lists it gets an access token about
 * itself (`sub` = its client_id), with no refresh token and no user, so no provider is asked.
 * Whether the client is confidential is decided by how it authenticated, not by its settings:
 * any method but `none` proves it holds a credential.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export async function clientCredentialsGrant(
  params: TokenParams,
  authenticated: AuthenticatedClient,
  tenant: TenantContext,
  deps: GrantDeps,
  /** The thumbprint of the request's DPoP key: the access token is bound to it. */
  jkt?: string,
): Promise<TokenResponse> {
  const { client, method } = authenticated
  if (method === 'none') {
    // §4.4: "MUST only be used by confidential clients".
    throw new OAuthError(
      'unauthorized_client',
      'the client_credentials grant needs a confidential client',
    )
  }
  if (!client.grantTypes.includes('client_credentials')) {
    throw new OAuthError(
      'unauthorized_client',
      'the client_credentials grant is not enabled for this client',
    )
  }
  for (const name of OTHER_GRANTS_PARAMS) {
    if (params[name] !== undefined) {
      throw new OAuthError(
        'invalid_request',
        `${name} is not a parameter of the client_credentials grant`,
      )
    }
  }
  const resource = tokenResource(tenant, params.resource)
  const scopes = scopesForResource(narrowScope(params.scope, client.scopes), resource)
  // §4.4.3: a refresh token SHOULD NOT be included; the client can always ask again. The jti
  // names no refresh family: only its own revocation (or its key's) ends the token early.
  return issueTokenResponse(
    {
      sub: client.clientId,
      clientId: client.clientId,
      scopes,
      audience: audienceOf(tenant, resource),
      ...(jkt === undefined ? {} : { jkt }),
    },
    undefined,
    tenant,
    deps,
  )
}
