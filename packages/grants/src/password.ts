import type { Client } from '@tessera/config-schema'
import { issueTokenResponse } from './access-token.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { OAuthError } from './errors.js'
import type { TokenParams } from './request.js'
import { audienceOf, scopesForResource, tokenResource } from './resource.js'
import { narrowScope } from './scope.js'
import { checkPasswordThrottled } from './throttle.js'

/**
 * The resource owner password credentials grant: only for clients that list it, and never with
 * a refresh token. Failed checks are throttled per tenant+username and per client address.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3
 */
export async function passwordGrant(
  params: TokenParams,
  client: Client,
  address: string,
  tenant: TenantContext,
  deps: GrantDeps,
  /** The thumbprint of the request's DPoP key: the access token is bound to it. */
  jkt?: string,
): Promise<TokenResponse> {
  if (!client.grantTypes.includes('password')) {
    throw new OAuthError('unauthorized_client', 'the password grant is not enabled for this client')
  }
  const { username, password } = params
  if (username === undefined) throw new OAuthError('invalid_request', 'username is required')
  if (password === undefined) throw new OAuthError('invalid_request', 'password is required')
  const resource = tokenResource(tenant, params.resource)
  const scopes = scopesForResource(narrowScope(params.scope, client.scopes), resource)

  const user = await checkPasswordThrottled(
    { tenant: tenant.name, username, password, address },
    tenant.users,
    deps,
  )
  if (user === null) throw new OAuthError('invalid_grant', 'invalid username or password')

  // RFC 6749 §4.3.3 allows a refresh token here; Tessera never gives one for this grant.
  return issueTokenResponse(
    {
      sub: user.sub,
      clientId: client.clientId,
      scopes,
      claims: user.claims,
      audience: audienceOf(tenant, resource),
      ...(jkt === undefined ? {} : { jkt }),
    },
    undefined,
    tenant,
    deps,
  )
}
