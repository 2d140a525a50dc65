import type { Client } from '@tessera/config-schema'
import { issueAccessToken } from './access-token.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { OAuthError } from './errors.js'
import type { TokenParams } from './request.js'
import { narrowScope } from './scope.js'

/**
 * The resource owner password credentials grant: only for clients that list it, and never with
 * a refresh token. Failed checks are throttled per tenant+username and per client address.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3 — §4.3.2 requires protection
 *   against brute-force attacks on this endpoint.
 */
export async function passwordGrant(
  params: TokenParams,
  client: Client,
  address: string,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<TokenResponse> {
  if (!client.grantTypes.includes('password')) {
    throw new OAuthError('unauthorized_client', 'the password grant is not enabled for this client')
  }
  const { username, password } = params
  if (username === undefined) throw new OAuthError('invalid_request', 'username is required')
  if (password === undefined) throw new OAuthError('invalid_request', 'password is required')
  const scopes = narrowScope(params.scope, client.scopes)

  const now = deps.clock()
  const policy = deps.throttlePolicy
  const userKey = `user:${tenant.name}:${username.normalize('NFC').toLowerCase()}`
  const addressKey = `addr:${address}`
  const [userFailures, addressFailures] = await Promise.all([
    deps.throttle.getFailures(userKey, now),
    deps.throttle.getFailures(addressKey, now),
  ])
  // Refuse before asking the provider, so a locked account cannot be probed further.
  const blockedUntil = Math.max(
    userFailures.count >= policy.maxFailuresPerUser ? userFailures.resetAt : 0,
    addressFailures.count >= policy.maxFailuresPerAddress ? addressFailures.resetAt : 0,
  )
  if (blockedUntil > now) throw tooManyAttempts(blockedUntil, now)

  const user = await tenant.users.authenticate({ username, password })
  if (user === null) {
    await Promise.all([
      deps.throttle.recordFailure(userKey, now, policy.windowMs),
      deps.throttle.recordFailure(addressKey, now, policy.windowMs),
    ])
    throw new OAuthError('invalid_grant', 'invalid username or password')
  }
  await deps.throttle.clearFailures(userKey)

  const access = await issueAccessToken(
    { sub: user.sub, clientId: client.clientId, scopes, claims: user.claims },
    tenant,
    deps,
  )
  return {
    access_token: access.token,
    token_type: 'bearer',
    expires_in: access.expiresIn,
    scope: scopes.join(' '),
  }
}

function tooManyAttempts(until: number, now: number): OAuthError {
  return new OAuthError('temporarily_unavailable', 'too many failed attempts; try again later', {
    retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)),
  })
}
