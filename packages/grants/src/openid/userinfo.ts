import type { JWTPayload } from '@tessera/keys'
import type { GrantDeps, TenantContext } from '../context.js'
import { verifyDpopProof } from '../dpop/proof.js'
import { OAuthError } from '../errors.js'
import { isAccessTokenLive } from '../introspection.js'
import { releasedClaims } from './claims.js'

/** How the access token came: its Authorization scheme, and the request's DPoP side. */
export interface UserInfoPresentation {
  /** `DPoP` for `Authorization: DPoP <token>`; `Bearer` otherwise (header or form body). */
  scheme: 'Bearer' | 'DPoP'
  /** Every `DPoP` header of the request. */
  proofs: readonly string[]
  method: string
  /** The issuer's scheme with the Host the request was sent to: `htu` may name it. */
  requestOrigin?: string
}

const BEARER: UserInfoPresentation = { scheme: 'Bearer', proofs: [], method: 'GET' }

/** The claims that mark an ID token, which is never an access token. */
export const ID_TOKEN_MARKERS = ['nonce', 'at_hash', 'azp'] as const

/**
 * The UserInfo endpoint's answer for a bearer access token (OpenID Connect Core §5.3): `sub` and
 * the claims its scope releases (`profile`, `email`), as the ID token of that sign-in has them.
 *
 * @throws OAuthError `invalid_token` for a token that does not verify at this tenant, has expired,
 *   was revoked (itself, its sign-in, its key) or is an ID token; `insufficient_scope` for a
 *   live access token without `openid`
 * @see https://openid.net/specs/openid-connect-core-1_0.html#UserInfo
 */
export async function userInfo(
  token: string,
  tenant: TenantContext,
  deps: GrantDeps,
  presentation: UserInfoPresentation = BEARER,
): Promise<Record<string, unknown>> {
  const payload = await tenant.verifyAccessToken(token)
  if (payload === undefined) {
    throw new OAuthError('invalid_token', 'the access token is invalid or has expired')
  }
  if (ID_TOKEN_MARKERS.some((claim) => Object.hasOwn(payload, claim))) {
    throw new OAuthError('invalid_token', 'an ID token is not an access token')
  }
  if (!(await isAccessTokenLive(payload, tenant, deps, deps.clock()))) {
    throw new OAuthError('invalid_token', 'the access token has been revoked')
  }
  await checkSender(payload, token, presentation, tenant, deps)
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : []
  if (!scopes.includes('openid') || typeof payload.sub !== 'string') {
    throw new OAuthError('insufficient_scope', 'the access token was not issued for openid')
  }
  return { sub: payload.sub, ...releasedClaims(scopes, payload) }
}

/**
 * A DPoP-bound token (`cnf.jkt`) is accepted only with the DPoP scheme and a proof of its key
 * for this request (RFC 9449 §7); an unbound one only with the Bearer scheme.
 *
 * @throws OAuthError `invalid_token` for a bound token sent as Bearer or an unbound one sent as
 *   DPoP; `invalid_dpop_proof` or `use_dpop_nonce` for a proof that fails
 */
async function checkSender(
  payload: JWTPayload,
  token: string,
  presentation: UserInfoPresentation,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<void> {
  const jkt = (payload.cnf as { jkt?: unknown } | undefined)?.jkt
  if (typeof jkt !== 'string') {
    if (presentation.scheme === 'DPoP') {
      throw new OAuthError('invalid_token', 'the access token is not bound to a DPoP key', {
        challenge: 'DPoP',
      })
    }
    return
  }
  if (presentation.scheme !== 'DPoP') {
    throw new OAuthError('invalid_token', 'a DPoP-bound access token must be sent as DPoP', {
      challenge: 'DPoP',
    })
  }
  const proof = await verifyDpopProof(
    {
      proofs: presentation.proofs,
      method: presentation.method,
      path: '/userinfo',
      accessToken: token,
      ...(presentation.requestOrigin === undefined
        ? {}
        : { requestOrigin: presentation.requestOrigin }),
    },
    tenant,
    deps,
  )
  if (proof === undefined) {
    throw new OAuthError('invalid_dpop_proof', 'a DPoP-bound access token needs a DPoP proof')
  }
  if (proof.jkt !== jkt) {
    throw new OAuthError(
      'invalid_dpop_proof',
      'the DPoP proof is not made with the key of the token',
    )
  }
}
