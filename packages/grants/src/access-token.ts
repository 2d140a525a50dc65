import type { TenantContext, TokenResponse } from './context.js'
import { familyJti } from './internal/jti.js'
import { hasOpenIdScope } from './openid/claims.js'
import { issueIdToken } from './openid/id-token.js'

/** Claims Tessera sets itself; a provider's extra claims can never replace them. */
export const RESERVED_CLAIMS = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'client_id',
  'scope',
  // What marks an ID token, which resource servers refuse as an access token: a provider's
  // claim of that name must not get an access token refused.
  'nonce',
  'at_hash',
  'azp',
  // What binds a token to a DPoP key: a provider's claim must not bind it to another.
  'cnf',
])

export interface AccessTokenInput {
  sub: string
  clientId: string
  scopes: readonly string[]
  /** Extra claims from the provider script. */
  claims?: Readonly<Record<string, unknown>>
  /**
   * The family of the sign-in the token comes from (code and refresh grants): the token's `jti`
   * names it, so that introspection sees the family's revocation, and the token never outlives
   * it (`exp` at most the family's end).
   */
  family?: { familyId: string; expiresAt: number }
  /** The token's `aud` when it is for one resource (RFC 8707); absent: the tenant's audience. */
  audience?: string
  /** The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6). */
  jkt?: string
}

export interface IssuedAccessToken {
  token: string
  expiresIn: number
  jti: string
}

/**
 * Mints an access token (`iss`, `sub`, `aud`, `exp`, `iat`, `jti`, `client_id`, `scope`,
 * plus the provider's claims that do not clash), identical under HS256 and RS256.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9068
 */
export async function issueAccessToken(
  input: AccessTokenInput,
  tenant: TenantContext,
  deps: { clock: () => number; randomId: () => string },
): Promise<IssuedAccessToken> {
  const iat = Math.floor(deps.clock() / 1000)
  const { family } = input
  const expiresIn =
    family === undefined
      ? tenant.accessTokenTtlSeconds
      : Math.min(tenant.accessTokenTtlSeconds, Math.floor(family.expiresAt / 1000) - iat)
  const jti = family === undefined ? deps.randomId() : familyJti(family.familyId, deps.randomId())
  const extra: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(input.claims ?? {})) {
    if (!RESERVED_CLAIMS.has(name)) extra[name] = value
  }
  const { token } = await tenant.signer.sign({
    ...extra,
    iss: tenant.issuer,
    sub: input.sub,
    aud: input.audience ?? tenant.audience,
    exp: iat + expiresIn,
    iat,
    jti,
    client_id: input.clientId,
    scope: input.scopes.join(' '),
    ...(input.jkt === undefined ? {} : { cnf: { jkt: input.jkt } }),
  })
  return { token, expiresIn, jti }
}

/** The sign-in an OpenID Connect token response speaks of (code and refresh grants). */
export interface SignIn {
  /** When the user typed the password (epoch milliseconds). */
  authTime?: number
  /** The authorization request's nonce: the code grant's ID token echoes it. */
  nonce?: string
  /** The sign-in session. */
  sid?: string
}

/**
 * The RFC 6749 §5.1 response every grant returns: a fresh access token for `input`, plus the
 * refresh token when the grant hands one out, plus an ID token when the grant speaks of a
 * `signIn` and the access token's scope holds `openid`.
 */
export async function issueTokenResponse(
  input: AccessTokenInput,
  refreshToken: string | undefined,
  tenant: TenantContext,
  deps: { clock: () => number; randomId: () => string },
  signIn?: SignIn,
): Promise<TokenResponse> {
  const access = await issueAccessToken(input, tenant, deps)
  const idToken =
    signIn === undefined || !hasOpenIdScope(input.scopes)
      ? undefined
      : await issueIdToken(
          {
            clientId: input.clientId,
            sub: input.sub,
            scopes: input.scopes,
            claims: input.claims ?? {},
            accessToken: access.token,
            expiresIn: access.expiresIn,
            ...signIn,
          },
          tenant,
          deps,
        )
  return {
    access_token: access.token,
    token_type: input.jkt === undefined ? 'bearer' : 'DPoP',
    expires_in: access.expiresIn,
    scope: input.scopes.join(' '),
    ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
    ...(idToken === undefined ? {} : { id_token: idToken }),
  }
}
