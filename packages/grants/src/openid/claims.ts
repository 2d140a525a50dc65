/**
 * The standard claims of OpenID Connect Core §5.1 that the `profile` and `email` scopes release
 * (§5.4), from what the provider script answered at sign-in.
 *
 * @module
 */

/** §5.4: the claims the `profile` scope asks for. */
export const PROFILE_CLAIMS = [
  'name',
  'family_name',
  'given_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'updated_at',
] as const

/** §5.4: the claims the `email` scope asks for. */
export const EMAIL_CLAIMS = ['email', 'email_verified'] as const

/** The claims of every ID token Tessera issues (those present depend on the sign-in). */
export const ID_TOKEN_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'azp',
  'at_hash',
  'sid',
] as const

/** Whether a space-separated or listed scope holds `openid`: the request is an OpenID one. */
export function hasOpenIdScope(scopes: string | readonly string[]): boolean {
  const list = typeof scopes === 'string' ? scopes.split(' ') : scopes
  return list.includes('openid')
}

/**
 * The user claims that `scopes` release from the provider's `claims`: the profile claims with
 * `profile`, the email claims with `email`, each only when the provider answered it, and nothing
 * else (a provider's other claims stay in the access token only).
 */
export function releasedClaims(
  scopes: readonly string[],
  claims: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const released: Record<string, unknown> = {}
  const take = (names: readonly string[]): void => {
    for (const name of names) {
      if (Object.hasOwn(claims, name) && claims[name] !== undefined) released[name] = claims[name]
    }
  }
  if (scopes.includes('profile')) take(PROFILE_CLAIMS)
  if (scopes.includes('email')) take(EMAIL_CLAIMS)
  return released
}
