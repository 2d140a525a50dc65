import type { Client } from '@tessera/config-schema'
import { issueTokenResponse } from './access-token.js'
import type { SignIn } from './access-token.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { randomToken, sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import { isCodeVerifier, verifyS256 } from './pkce.js'
import type { AuthorizationCodeRecord, FamilyIssue, RefreshFamily } from './ports.js'
import type { TokenParams } from './request.js'
import { checkBoundKey, NO_DPOP } from './dpop/binding.js'
import type { DpopBinding } from './dpop/binding.js'
import { audienceOf, scopesForResource, tokenResource } from './resource.js'

/**
 * The authorization_code grant: redeems a code once, atomically, checking client,
 * `redirect_uri`, PKCE and expiry; returns an access token and, for clients that list the
 * refresh_token grant, the first refresh token of a new family. A replay of the code revokes the
 * family, and with it the refresh and access tokens the code gave.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
export async function authorizationCodeGrant(
  params: TokenParams,
  client: Client,
  tenant: TenantContext,
  deps: GrantDeps,
  dpop: DpopBinding = NO_DPOP,
): Promise<TokenResponse> {
  if (!client.grantTypes.includes('authorization_code')) {
    throw new OAuthError(
      'unauthorized_client',
      'the authorization_code grant is not enabled for this client',
    )
  }
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = params
  if (code === undefined) throw new OAuthError('invalid_request', 'code is required')
  if (redirectUri === undefined) throw new OAuthError('invalid_request', 'redirect_uri is required')
  if (verifier !== undefined && !isCodeVerifier(verifier)) {
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~"',
    )
  }

  const codeHash = sha256Hex(code)
  const record = await deps.codes.findCode(tenant.name, codeHash)
  const now = deps.clock()
  if (record === undefined || record.clientId !== client.clientId) {
    // A code of another client is as unknown to this one as a made-up code.
    throw new OAuthError('invalid_grant', 'invalid authorization code')
  }
  if (record.consumedAt !== undefined) await refuseReplay(record, tenant, deps, now)
  if (record.expiresAt <= now) throw new OAuthError('invalid_grant', 'authorization code expired')
  if (record.redirectUri !== redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request')
  }
  checkPkce(record, verifier)
  checkBoundKey(record.dpopJkt, dpop, 'the authorization code')

  // Checked before the redemption, so that a refused resource leaves the code unspent.
  const resource = tokenResource(tenant, params.resource, record.resources ?? [])
  const scopes = scopesForResource(record.scope === '' ? [] : record.scope.split(' '), resource)
  const refreshToken = client.grantTypes.includes('refresh_token') ? randomToken() : undefined
  // Every redemption starts a family, in the redemption's own transaction: the access token
  // names it, so a replay of the code, which revokes the code's families, revokes the token too.
  // Without a refresh token the family lives as long as the access token.
  const lifetimeSeconds =
    refreshToken === undefined ? tenant.accessTokenTtlSeconds : deps.refreshTokenTtlSeconds
  const family: RefreshFamily = {
    familyId: deps.randomId(),
    tenant: tenant.name,
    clientId: client.clientId,
    sub: record.sub,
    scope: record.scope,
    claims: record.claims,
    codeHash,
    ...(record.sid === undefined ? {} : { sid: record.sid }),
    ...(record.authTime === undefined ? {} : { authTime: record.authTime }),
    ...(record.resources === undefined ? {} : { resources: record.resources }),
    // A public client's refresh tokens are bound to the key of the proof (RFC 9449 §5).
    ...(dpop.publicClient && refreshToken !== undefined && dpop.jkt !== undefined
      ? { dpopJkt: dpop.jkt }
      : {}),
    createdAt: now,
    expiresAt: now + lifetimeSeconds * 1000,
  }
  const issue: FamilyIssue =
    refreshToken === undefined ? { family } : { family, tokenHash: sha256Hex(refreshToken) }
  // The check above and this redemption are separate reads; only the atomic redemption
  // decides which of several concurrent requests wins.
  if (!(await deps.codes.redeemCode(tenant.name, codeHash, now, issue))) {
    await refuseReplay(record, tenant, deps, now)
  }

  return issueTokenResponse(
    {
      sub: record.sub,
      clientId: client.clientId,
      scopes,
      claims: record.claims,
      family,
      audience: audienceOf(tenant, resource),
      ...(dpop.jkt === undefined ? {} : { jkt: dpop.jkt }),
    },
    refreshToken,
    tenant,
    deps,
    signInOf(record),
  )
}

/** What the ID token of a code says of the sign-in (used only when the scope holds `openid`). */
function signInOf(record: AuthorizationCodeRecord): SignIn {
  return {
    // A code stored before sign-ins recorded their time was made right after the login.
    authTime: record.authTime ?? record.createdAt,
    ...(record.nonce === undefined ? {} : { nonce: record.nonce }),
    ...(record.sid === undefined ? {} : { sid: record.sid }),
  }
}

/**
 * A code used twice may have been stolen: refuse it and revoke what it issued.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 */
async function refuseReplay(
  record: AuthorizationCodeRecord,
  tenant: TenantContext,
  deps: GrantDeps,
  now: number,
): Promise<never> {
  await deps.refreshTokens.revokeFamiliesByCode(tenant.name, record.codeHash, now)
  throw new OAuthError('invalid_grant', 'authorization code already used')
}

function checkPkce(record: AuthorizationCodeRecord, verifier: string | undefined): void {
  if (record.codeChallenge === undefined) {
    // A verifier for a code made without a challenge is a downgrade attempt (RFC 9700 §2.1.1).
    if (verifier !== undefined) {
      throw new OAuthError('invalid_grant', 'code_verifier sent for a code issued without PKCE')
    }
    return
  }
  if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required')
  if (!verifyS256(verifier, record.codeChallenge)) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code challenge')
  }
}
