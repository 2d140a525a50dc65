import type { AuthorizationRequest } from '../authorize.js'
import type { GrantDeps, TenantContext } from '../context.js'
import { randomToken, sha256Hex } from '../crypto.js'
import type { AuthenticatedUser } from '../ports.js'

/** Builds `redirect_uri?…` keeping the registered URI (and any query it has) byte for byte. */
export function redirectTo(
  redirectUri: string,
  params: Record<string, string | undefined>,
): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) query.append(name, value)
  return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${query.toString()}`
}

/**
 * How many unredeemed codes one sign-in session keeps per client: each request that rides a live
 * session stores a code, and a cross-site page can make a signed-in browser send thousands of
 * them. The newest replace the oldest, so a few tabs signing in to one client at once all get
 * codes that redeem.
 */
export const MAX_CODES_PER_SESSION_AND_CLIENT = 10

/**
 * Stores a code for `user` and answers the redirect that hands it over, with `state` and `iss`
 * (RFC 9207).
 */
export async function issueCode(
  request: AuthorizationRequest,
  user: AuthenticatedUser,
  signIn: { authTime: number; sid: string } | undefined,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<string> {
  const now = deps.clock()
  const code = randomToken()
  const nonce = request.openid?.nonce
  await deps.codes.saveCode(
    {
      codeHash: sha256Hex(code),
      tenant: tenant.name,
      clientId: request.client.clientId,
      redirectUri: request.redirectUri,
      scope: request.scope,
      sub: user.sub,
      claims: user.claims ?? {},
      createdAt: now,
      expiresAt: now + deps.codeTtlSeconds * 1000,
      ...(request.codeChallenge === undefined ? {} : { codeChallenge: request.codeChallenge }),
      ...(signIn === undefined ? {} : { sid: signIn.sid, authTime: signIn.authTime }),
      ...(nonce === undefined ? {} : { nonce }),
      ...(request.resources === undefined ? {} : { resources: request.resources }),
      ...(request.dpopJkt === undefined ? {} : { dpopJkt: request.dpopJkt }),
    },
    signIn === undefined ? undefined : { keepPerSession: MAX_CODES_PER_SESSION_AND_CLIENT },
  )
  return redirectTo(request.redirectUri, { code, state: request.state, iss: tenant.issuer })
}
