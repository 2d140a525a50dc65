/**
 * Resource indicators (RFC 8707): which configured resource a request names, the audience of
 * the token that follows, and the scopes a token for it may carry.
 *
 * @module
 */
import { normaliseResourceUri } from '@tessera/config-schema'
import type { Resource } from '@tessera/config-schema'
import type { TenantContext } from './context.js'
import { OAuthError } from './errors.js'

/**
 * The configured resource that `uri` names: equal once scheme and host are lower-cased and a
 * default port dropped (RFC 8707 §2). Anything else is `invalid_target`.
 */
export function findResource(tenant: TenantContext, uri: string): Resource {
  const key = normaliseResourceUri(uri)
  const found =
    key === undefined
      ? undefined
      : tenant.resources?.find((resource) => normaliseResourceUri(resource.uri) === key)
  if (found === undefined) throw new OAuthError('invalid_target', 'unknown resource')
  return found
}

/**
 * The resources an authorization request names, as configured (their `uri`), without
 * duplicates; `[]` when it names none.
 */
export function findResources(tenant: TenantContext, uris: readonly string[]): string[] {
  return [...new Set(uris.map((uri) => findResource(tenant, uri).uri))]
}

/**
 * The resource a token request gets: the one it names, which a sign-in (`signedInFor`, the
 * resources its authorization request named) must have named too; without one, the sign-in's
 * only resource; otherwise none, and the token is for the tenant's audience.
 */
export function tokenResource(
  tenant: TenantContext,
  requested: string | undefined,
  signedInFor?: readonly string[],
): Resource | undefined {
  if (requested !== undefined) {
    const resource = findResource(tenant, requested)
    if (signedInFor !== undefined && !signedInFor.includes(resource.uri)) {
      throw new OAuthError('invalid_target', 'the resource was not named at sign-in')
    }
    return resource
  }
  if (signedInFor?.length === 1) return findResource(tenant, signedInFor[0]!)
  return undefined
}

/**
 * `scopes` narrowed, silently, to what tokens for `resource` may carry; nothing left of a
 * non-empty request is `invalid_scope`.
 */
export function scopesForResource(
  scopes: readonly string[],
  resource: Resource | undefined,
): string[] {
  if (resource?.scopes === undefined) return [...scopes]
  const allowed = resource.scopes
  const narrowed = scopes.filter((scope) => allowed.includes(scope))
  if (narrowed.length === 0) {
    throw new OAuthError('invalid_scope', 'no requested scope is allowed for the resource')
  }
  return narrowed
}

/** The audience of a token for `resource`: its uri as configured, or the tenant's audience. */
export function audienceOf(tenant: TenantContext, resource: Resource | undefined): string {
  return resource === undefined ? tenant.audience : resource.uri
}
