import {
  DPOP_SIGNING_ALGORITHMS,
  OAuthError,
  parseTokenRequestBody,
  userInfo,
} from '@tessera/grants'
import type { GrantDeps } from '@tessera/grants'
import type { Context, Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import { dpopInput, setDpopNonce } from '../http/dpop.js'
import { OAUTH_STATUS } from '../http/oauth-status.js'
import type { TenantState } from '../http/tenant.js'

export interface UserInfoRouteDeps {
  grants: GrantDeps
  maxBodyBytes: number
}

// RFC 6750 §2.1 and RFC 9449 §7.1: a token68 after the scheme, which is case-insensitive.
const AUTHORIZATION = /^(bearer|dpop) +([\w.~+/-]+=*)$/i

/** An RFC 6750 auth-param value: a quoted string without `"` or `\`, which descriptions never hold. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`
}

/** The access token of the request and the scheme it came with. */
interface Presented {
  token: string
  scheme: 'Bearer' | 'DPoP'
}

/**
 * The RFC 6750 §3 answer: 401 with a `WWW-Authenticate` challenge, naming the error (none when
 * no token was sent at all, §3.1), and the same error as JSON. The challenge is `DPoP` (RFC 9449
 * §7.1, with the proof algorithms) for a DPoP request or a token that must be sent as DPoP.
 */
function challenge(
  ctx: Context,
  realm: string,
  scheme: 'Bearer' | 'DPoP',
  error?: OAuthError,
): void {
  const params = [`realm=${quoted(realm)}`]
  if (error !== undefined) {
    params.push(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`)
    if (error.code === 'insufficient_scope') params.push(`scope="openid"`)
  }
  if (scheme === 'DPoP') params.push(`algs="${DPOP_SIGNING_ALGORITHMS.join(' ')}"`)
  ctx.set('WWW-Authenticate', `${scheme} ${params.join(', ')}`)
  ctx.set('Cache-Control', 'no-store')
  if (error?.dpopNonce !== undefined) ctx.set('DPoP-Nonce', error.dpopNonce)
  // A proof refused at a protected resource is 401 (RFC 9449 §7.1), not the 400 of /token.
  const dpopError = error?.code === 'invalid_dpop_proof' || error?.code === 'use_dpop_nonce'
  ctx.status = error === undefined || dpopError ? 401 : OAUTH_STATUS[error.code]
  ctx.body =
    error === undefined
      ? { error: 'invalid_token', error_description: 'no access token was sent' }
      : { error: error.code, error_description: error.description }
}

/** The token of the request: the Authorization header, or a POSTed form's `access_token` (§2.2). */
async function presentedToken(ctx: Context, maxBodyBytes: number): Promise<Presented | undefined> {
  const header = ctx.get('Authorization')
  let fromHeader: Presented | undefined
  if (header !== '') {
    const match = AUTHORIZATION.exec(header)
    if (match?.[1] === undefined || match[2] === undefined) {
      throw new OAuthError(
        'invalid_request',
        'the Authorization header is not a Bearer or DPoP access token',
      )
    }
    fromHeader = { token: match[2], scheme: match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer' }
  }
  let fromBody: string | undefined
  if (ctx.method === 'POST') {
    const raw = await readTextBody(ctx, maxBodyBytes)
    if (raw !== '' || ctx.get('Content-Type') !== '') {
      fromBody = parseTokenRequestBody(raw, ctx.get('Content-Type') || undefined).access_token
    }
  }
  // §2: a client must not use more than one method.
  if (fromHeader !== undefined && fromBody !== undefined) {
    throw new OAuthError(
      'invalid_request',
      'send the access token once, not in the header and the body',
    )
  }
  return fromHeader ?? (fromBody === undefined ? undefined : { token: fromBody, scheme: 'Bearer' })
}

/**
 * GET and POST /userinfo (OpenID Connect Core §5.3): `sub` and the claims the token's scope
 * releases, for a live access token with `openid`; a DPoP-bound token only as `Authorization:
 * DPoP` with a proof of its key (RFC 9449 §7); errors as RFC 6750 §3 challenges.
 */
export function userInfoRoute(deps: UserInfoRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const { tenant } = ctx.state
    let scheme: 'Bearer' | 'DPoP' = 'Bearer'
    try {
      const presented = await presentedToken(ctx, deps.maxBodyBytes)
      if (presented === undefined) return challenge(ctx, tenant.issuer, scheme)
      scheme = presented.scheme
      const claims = await userInfo(presented.token, tenant.context, deps.grants, {
        scheme,
        method: ctx.method,
        ...dpopInput(ctx),
      })
      await setDpopNonce(ctx, deps.grants)
      ctx.set('Cache-Control', 'no-store')
      ctx.set('Pragma', 'no-cache')
      ctx.body = claims
    } catch (error) {
      if (!(error instanceof OAuthError) || error.code === 'server_error') throw error
      if (error.code === 'invalid_request') {
        // §3.1: a malformed request is 400, still with the challenge.
        ctx.set(
          'WWW-Authenticate',
          `${scheme} realm=${quoted(tenant.issuer)}, error="invalid_request"`,
        )
        ctx.set('Cache-Control', 'no-store')
        ctx.status = 400
        ctx.body = { error: error.code, error_description: error.description }
        return
      }
      const dpop = scheme === 'DPoP' || error.challenge === 'DPoP'
      challenge(ctx, tenant.issuer, dpop ? 'DPoP' : 'Bearer', error)
    }
  }
}
