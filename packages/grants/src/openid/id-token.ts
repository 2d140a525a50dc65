import type { TenantContext } from '../context.js'
import { sha256 } from '../crypto.js'
import { OAuthError } from '../errors.js'
import { releasedClaims } from './claims.js'

/** What an ID token says, besides what the tenant and the clock give. */
export interface IdTokenInput {
  clientId: string
  sub: string
  /** The scopes of the access token it comes with: `profile`/`email` release claims. */
  scopes: readonly string[]
  /** The provider's claims at sign-in. */
  claims: Readonly<Record<string, unknown>>
  /** The access token issued with it, for `at_hash`. */
  accessToken: string
  /** Seconds; the ID token expires with the access token. */
  expiresIn: number
  /** When the user typed the password (epoch milliseconds). */
  authTime?: number
  /** The authorization request's nonce; code grant only. */
  nonce?: string
  /** The sign-in session. */
  sid?: string
}

/**
 * `at_hash`: base64url of the left half of the SHA-256 of the access token's ASCII (RS256 uses
 * SHA-256).
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#CodeIDToken
 */
export function accessTokenHash(accessToken: string): string {
  return sha256(accessToken).subarray(0, 16).toString('base64url')
}

/**
 * Mints an ID token: always RS256 from the tenant's key ring (OpenID Connect Core §15.1), also at
 * tenants whose access tokens are HS256, so that a client verifies it with the published JWKS
 * and never needs the shared secret. Never carries `scope`, `client_id` or `jti`; carries
 * `nonce`, `at_hash` and `azp`, which resource servers refuse in an access token.
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#IDToken
 */
export async function issueIdToken(
  input: IdTokenInput,
  tenant: TenantContext,
  deps: { clock: () => number },
): Promise<string> {
  const signer = tenant.idTokenSigner
  if (signer === undefined) {
    // config-schema and the key ring give every tenant with an openid client a signer.
    throw new OAuthError('server_error', 'this tenant cannot sign ID tokens', {
      cause: new Error(`tenant ${tenant.name} has no ID-token signer`),
    })
  }
  const iat = Math.floor(deps.clock() / 1000)
  const { token } = await signer.sign({
    ...releasedClaims(input.scopes, input.claims),
    iss: tenant.issuer,
    sub: input.sub,
    aud: input.clientId,
    exp: iat + input.expiresIn,
    iat,
    ...(input.authTime === undefined ? {} : { auth_time: Math.floor(input.authTime / 1000) }),
    ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
    azp: input.clientId,
    at_hash: accessTokenHash(input.accessToken),
    ...(input.sid === undefined ? {} : { sid: input.sid }),
  })
  return token
}
