import type { Client } from '@tessera/config-schema'
import { issueTokenResponse } from './access-token.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { randomToken, sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { RotateResult } from './ports.js'
import type { TokenParams } from './request.js'
import { checkBoundKey, NO_DPOP } from './dpop/binding.js'
import type { DpopBinding } from './dpop/binding.js'
import { hasOpenIdScope } from './openid/claims.js'
import { audienceOf, scopesForResource, tokenResource } from './resource.js'
import { narrowScope } from './scope.js'

/**
 * The refresh_token grant with rotation: every use spends the presented token and returns a new
 * one; presenting a spent token revokes its whole family (RFC 9700 §4.14.2). Concurrent uses of
 * one token therefore end with one success and a revoked family: a legitimate client never
 * sends the same refresh token twice at once, so this is treated as theft.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
export async function refreshTokenGrant(
  params: TokenParams,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
  dpop: DpopBinding = NO_DPOP,
): Promise<TokenResponse> {
  if (!client.grantTypes.includes('refresh_token')) {
    throw new OAuthError(
      'unauthorized_client',
      'the refresh_token grant is not enabled for this client',
    )
  }
  const presented = params.refresh_token
  if (presented === undefined) throw new OAuthError('invalid_request', 'refresh_token is required')

  const oldHash = sha256Hex(presented)
  const next = randomToken()
  const store = deps.refreshTokens
  let result: RotateResult
  let scopes: string[]
  // A public client's family may be bound to a DPoP key (only public clients' families are), so
  // it is read and checked before the rotation: a request without the key's proof leaves the
  // token unspent.
  if (params.scope === undefined && params.resource === undefined && !dpop.publicClient) {
    // Nothing to check between the read and the rotation: the store checks the client itself,
    // and the access token gets the family's whole scope.
    result = await store.rotateRefreshTokenForClient(
      tenant.name,
      client.clientId,
      oldHash,
      sha256Hex(next),
      deps.clock(),
    )
    scopes = result.status === 'not_found' ? [] : splitScope(result.family.scope)
  } else {
    const found = await store.findRefreshToken(tenant.name, oldHash)
    if (found === undefined || found.family.clientId !== client.clientId) {
      throw new OAuthError('invalid_grant', 'invalid refresh token')
    }
    checkBoundKey(found.family.dpopJkt, dpop, 'the refresh token')
    // §6: the new access token may narrow the grant's scope; the refresh token keeps it whole.
    // Checked before the rotation, so that a refused scope leaves the token unspent.
    scopes = narrowScope(params.scope, splitScope(found.family.scope))
    // RFC 8707 §2.2: a refresh may only name a resource its sign-in named.
    scopesForResource(scopes, tokenResource(tenant, params.resource, found.family.resources ?? []))
    result = await store.rotateRefreshToken(tenant.name, oldHash, sha256Hex(next), deps.clock())
  }
  switch (result.status) {
    case 'rotated':
      break
    case 'reused':
      throw new OAuthError('invalid_grant', 'refresh token already used; the sign-in is revoked')
    case 'inactive':
      throw new OAuthError('invalid_grant', 'refresh token revoked or expired')
    case 'not_found':
      throw new OAuthError('invalid_grant', 'invalid refresh token')
  }

  const { family } = result
  const resource = tokenResource(tenant, params.resource, family.resources ?? [])
  scopes = scopesForResource(scopes, resource)
  return issueTokenResponse(
    {
      sub: family.sub,
      clientId: client.clientId,
      scopes,
      claims: family.claims,
      family,
      audience: audienceOf(tenant, resource),
      ...(dpop.jkt === undefined ? {} : { jkt: dpop.jkt }),
    },
    next,
    tenant,
    deps,
    // OpenID Connect Core §12.2: the same sign-in (auth_time, sid), a new iat; no nonce, which
    // belongs to the authorization request alone.
    hasOpenIdScope(family.scope)
      ? {
          authTime: family.authTime ?? family.createdAt,
          ...(family.sid === undefined ? {} : { sid: family.sid }),
        }
      : undefined,
  )
}

function splitScope(scope: string): string[] {
  return scope === '' ? [] : scope.split(' ')
}
