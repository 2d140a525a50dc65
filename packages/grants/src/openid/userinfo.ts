import type { GrantDeps, TenantContext } from '../context.js'
import { OAuthError } from '../errors.js'
import { isAccessTokenLive } from '../introspection.js'
import { releasedClaims } from './claims.js'

/** The claims that mark an ID token, which is never an access token. */
export const ID_TOKEN_MARKERS = ['nonce', 'at_hash', 'azp'] as const

/**
 * The UserInfo endpoint's answer for a bearer access token (OpenID Connect Core §5.3): `sub` and
 * the claims its scope releases (`profile`, `email`), as the ID token of that sign-in has them.
 *
 * @throws OAuthError `invalid_token` for a token that does not verify at this tenant, has expired,
 *   was revoked (itself, its sign-in, its key) or is an ID token; `insufficient_scope` for a
 *   live access token without `openid`
 * @see https://openid.net/specs/openid-connect-core-1_0.html#UserInfo
 */
export async function userInfo(
  token: string,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<Record<string, unknown>> {
  const payload = await tenant.verifyAccessToken(token)
  if (payload === undefined) {
    throw new OAuthError('invalid_token', 'the access token is invalid or has expired')
  }
  if (ID_TOKEN_MARKERS.some((claim) => Object.hasOwn(payload, claim))) {
    throw new OAuthError('invalid_token', 'an ID token is not an access token')
  }
  if (!(await isAccessTokenLive(payload, tenant, deps, deps.clock()))) {
    throw new OAuthError('invalid_token', 'the access token has been revoked')
  }
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : []
  if (!scopes.includes('openid') || typeof payload.sub !== 'string') {
    throw new OAuthError('insufficient_scope', 'the access token was not issued for openid')
  }
  return { sub: payload.sub, ...releasedClaims(scopes, payload) }
}
