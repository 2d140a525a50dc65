import type { Client } from '@tessera/config-schema'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { TokenParams } from './request.js'

// Three base64url segments: the shape of a JWS compact serialisation, i.e. an access token.
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/

/**
 * Token revocation. A refresh token of the requesting client revokes its whole family; an
 * unknown token, or one of another client, changes nothing and is not reported (§2.2). Access
 * tokens are self-contained JWTs that live until `exp`: they cannot be revoked, which the
 * client is told with `unsupported_token_type` (§2.2.1).
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
  const found = await deps.refreshTokens.findRefreshToken(tenant.name, sha256Hex(token))
  if (found !== undefined) {
    if (found.family.clientId === client.clientId) {
      await deps.refreshTokens.revokeFamily(tenant.name, found.family.familyId, deps.clock())
    }
    return
  }
  if (params.token_type_hint === 'access_token' || JWT_SHAPE.test(token)) {
    throw new OAuthError(
      'unsupported_token_type',
      'access tokens cannot be revoked; they expire on their own',
    )
  }
}
