import type { Tenant } from '@tessera/config-schema'

/**
 * Whether the tenant has OpenID Connect clients (any client lists the `openid` scope, or the
 * scopes of its dynamic clients include it). ID tokens
 * are always RS256, so such a tenant keeps an RS256 key even when its access tokens are HS256,
 * with all that goes with one: a published JWKS, rotation, and the KEY_ENCRYPTION_SECRET rule of
 * `tessera start`.
 */
export function hasOpenIdClients(tenant: Tenant): boolean {
  return (
    tenant.clients.some((client) => client.scopes.includes('openid')) ||
    (tenant.dynamicClients?.scopes.includes('openid') ?? false)
  )
}

/** Whether the tenant keeps an active RS256 key: for its access tokens, or for ID tokens. */
export function keepsRs256Key(tenant: Tenant): boolean {
  return tenant.jwtAlgorithm === 'RS256' || hasOpenIdClients(tenant)
}
