import type { Client } from '@tessera/config-schema'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import { isIssuedExp, isIssuedJti } from './internal/jti.js'
import { REVOKED_ACCESS_TOKEN } from './introspection.js'
import type { TokenParams } from './request.js'

/**
 * Token revocation, for tokens issued to the requesting client (§2.1):
 *
 * - a refresh token revokes its whole family: the family's refresh tokens, and the access
 *   tokens issued from it, are no longer active;
 * - an access token is recorded as revoked until its `exp`: introspection reports it inactive
 *   from then on. Resource servers that verify tokens locally keep taking it until `exp`.
 *
 * An unknown or invalid token, or one of another client, changes nothing and is answered like
 * any other (§2.2: the client cannot tell the difference). `token_type_hint` only orders the
 * search.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7009
 */
export async function revokeToken(
  params: TokenParams,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<void> {
  const token = params.token
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required')
  const lookups = [
    () => revokeRefreshToken(token, client, tenant, deps),
    () => revokeAccessToken(token, client, tenant, deps),
  ]
  if (params.token_type_hint === 'access_token') lookups.reverse()
  for (const lookup of lookups) if (await lookup()) return
}

/** Revokes the family of a refresh token of the client; false when `token` is not one. */
async function revokeRefreshToken(
  token: string,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<boolean> {
  const found = await deps.refreshTokens.findRefreshToken(tenant.name, sha256Hex(token))
  if (found === undefined) return false
  if (found.family.clientId === client.clientId) {
    await deps.refreshTokens.revokeFamily(tenant.name, found.family.familyId, deps.clock())
  }
  return true
}

/** Records an access token of the client as revoked; false when `token` does not verify. */
async function revokeAccessToken(
  token: string,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<boolean> {
  const payload = await tenant.verifyAccessToken(token)
  if (payload === undefined) return false
  const { jti, exp, client_id: owner } = payload
  // A token without a jti or exp of Tessera's making is never reported active: nothing to record.
  if (owner !== client.clientId || !isIssuedJti(jti) || !isIssuedExp(exp)) return true
  // Kept until the token expires on its own; no later check needs it. Marking twice (a retry,
  // concurrent requests) leaves one mark: the first call's answer is all that differs.
  await deps.marks.mark(tenant.name, REVOKED_ACCESS_TOKEN, jti, exp * 1000, deps.clock())
  return true
}
