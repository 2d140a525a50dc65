import type { Client } from '@tessera/config-schema'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { TokenParams } from './request.js'

/** RFC 7662 §2.2 response. */
export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>)

const INACTIVE: IntrospectionResponse = { active: false }

/**
 * Token introspection, for confidential clients of the tenant (resource servers). Refresh
 * tokens are active while unspent in a live family; access tokens while their signature,
 * issuer and expiry verify.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7662
 */
export async function introspectToken(
  params: TokenParams,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<IntrospectionResponse> {
  if (client.clientSecret === undefined) {
    // §2.1: the endpoint must be protected; a public client cannot prove who it is.
    throw new OAuthError('invalid_client', 'introspection requires a confidential client')
  }
  const token = params.token
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required')
  const now = deps.clock()

  if (params.token_type_hint !== 'access_token') {
    const found = await deps.refreshTokens.findRefreshToken(tenant.name, sha256Hex(token))
    if (found !== undefined) {
      const { token: record, family } = found
      const live =
        record.spentAt === undefined && family.revokedAt === undefined && family.expiresAt > now
      if (!live) return INACTIVE
      return {
        active: true,
        token_type: 'refresh_token',
        iss: tenant.issuer,
        sub: family.sub,
        client_id: family.clientId,
        scope: family.scope,
        iat: Math.floor(record.createdAt / 1000),
        exp: Math.floor(family.expiresAt / 1000),
      }
    }
  }
  const payload = await tenant.verifyAccessToken(token)
  if (payload === undefined) return INACTIVE
  return { ...payload, active: true, token_type: 'access_token' }
}
