import type { Client } from '@tessera/config-schema'
import type { JWTPayload } from '@tessera/keys'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { isConfidentialClient } from './client-auth.js'
import { OAuthError } from './errors.js'
import { familyIdOfJti, isIssuedExp, isIssuedJti } from './internal/jti.js'
import type { TokenParams } from './request.js'

/** RFC 7662 §2.2 response. */
export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>)

const INACTIVE: IntrospectionResponse = { active: false }

/** The mark kind under which a revoked access token's `jti` is kept until its `exp`. */
export const REVOKED_ACCESS_TOKEN = 'access_token_revoked'

/**
 * Token introspection, for confidential clients of the tenant. A client sees the tokens issued
 * to it, and a client configured with `introspection: tenant` (a resource server) every token of
 * its tenant; any other token is `{ active: false }`, as an unknown one is.
 *
 * - A refresh token is active while unspent in a family that is neither revoked nor expired.
 * - An access token is active while its signature, issuer and expiry verify (an HS256 token at
 *   an RS256 tenant only if issued before the switch; a revoked kid no longer verifies), its
 *   family (code and refresh grants) is not revoked (refresh-token reuse, a replayed code,
 *   /revoke), and it was not itself revoked through /revoke. Password and client_credentials
 *   tokens have no family: nothing but their key, the algorithm rule or their own revocation
 *   ends them before exp.
 *
 * `token_type_hint` only orders the search (§2.1): a token of the other type is still found.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7662
 */
export async function introspectToken(
  params: TokenParams,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<IntrospectionResponse> {
  if (!isConfidentialClient(client)) {
    // §2.1: the endpoint must be protected; a public client cannot prove who it is.
    throw new OAuthError('invalid_client', 'introspection requires a confidential client')
  }
  const token = params.token
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required')
  const now = deps.clock()
  const sees = (owner: string): boolean =>
    client.introspection === 'tenant' || owner === client.clientId

  const lookups = [
    () => introspectRefreshToken(token, sees, tenant, deps, now),
    () => introspectAccessToken(token, sees, tenant, deps, now),
  ]
  if (params.token_type_hint === 'access_token') lookups.reverse()
  for (const lookup of lookups) {
    const found = await lookup()
    if (found !== undefined) return found
  }
  return INACTIVE
}

/** The answer for a refresh token of the tenant; undefined when `token` is not one. */
async function introspectRefreshToken(
  token: string,
  sees: (owner: string) => boolean,
  tenant: TenantContext,
  deps: GrantDeps,
  now: number,
): Promise<IntrospectionResponse | undefined> {
  const found = await deps.refreshTokens.findRefreshToken(tenant.name, sha256Hex(token))
  if (found === undefined) return undefined
  const { token: record, family } = found
  const live =
    record.spentAt === undefined && family.revokedAt === undefined && family.expiresAt > now
  if (!live || !sees(family.clientId)) return INACTIVE
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

/** The answer for an access token of the tenant; undefined when `token` does not verify as one. */
async function introspectAccessToken(
  token: string,
  sees: (owner: string) => boolean,
  tenant: TenantContext,
  deps: GrantDeps,
  now: number,
): Promise<IntrospectionResponse | undefined> {
  const payload = await tenant.verifyAccessToken(token)
  if (payload === undefined) return undefined
  if (typeof payload.client_id !== 'string' || !sees(payload.client_id)) return INACTIVE
  if (!(await isAccessTokenLive(payload, tenant, deps, now))) return INACTIVE
  // RFC 7662 §2.2: token_type as in the RFC 6749 §5.1 token response; a DPoP-bound token keeps
  // its `cnf` (RFC 9449 §6.2).
  const bound = typeof (payload.cnf as { jkt?: unknown } | undefined)?.jkt === 'string'
  return { ...payload, active: true, token_type: bound ? 'DPoP' : 'bearer' }
}

/**
 * Whether a verified access token is still live: not revoked itself, and its family (if it
 * names one) still stored and not revoked. A family is purged only once it has ended, and no
 * access token outlives its family, so a missing family means an expired token.
 */
export async function isAccessTokenLive(
  payload: JWTPayload,
  tenant: TenantContext,
  deps: GrantDeps,
  now: number,
): Promise<boolean> {
  const { jti } = payload
  // Every token Tessera issues has a jti of its own making; a token without one could not be
  // revoked, and one with another (only a holder of an HS256 secret could sign it) is not ours;
  // nor is an exp Tessera never writes, which could not be recorded as revoked either.
  if (!isIssuedJti(jti) || !isIssuedExp(payload.exp)) return false
  const familyId = familyIdOfJti(jti)
  const [revoked, family] = await Promise.all([
    deps.marks.isMarked(tenant.name, REVOKED_ACCESS_TOKEN, jti, now),
    familyId === undefined ? undefined : deps.refreshTokens.findFamily(tenant.name, familyId),
  ])
  if (revoked) return false
  // No family: a password or client_credentials token, live until its exp.
  if (familyId === undefined) return true
  // The family must be the one the token was issued from: the same client and subject. Tessera
  // never issues otherwise, so a mismatch means a jti forged to borrow another sign-in's family.
  return (
    family !== undefined &&
    family.revokedAt === undefined &&
    family.clientId === payload.client_id &&
    family.sub === payload.sub
  )
}
