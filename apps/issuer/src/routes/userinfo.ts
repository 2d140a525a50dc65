import { OAuthError, parseTokenRequestBody, userInfo } from '@tessera/grants'
import type { GrantDeps } from '@tessera/grants'
import type { Context, Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import { OAUTH_STATUS } from '../http/oauth-status.js'
import type { TenantState } from '../http/tenant.js'

export interface UserInfoRouteDeps {
  grants: GrantDeps
  maxBodyBytes: number
}

// RFC 6750 §2.1: b64token after the scheme, which is case-insensitive.
const BEARER = /^bearer +([\w.~+/-]+=*)$/i

/** An RFC 6750 auth-param value: a quoted string without `"` or `\`, which descriptions never hold. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`
}

/**
 * The RFC 6750 §3 answer: 401 with a `WWW-Authenticate: Bearer` challenge, naming the error
 * (none when no token was sent at all, §3.1), and the same error as JSON.
 */
function challenge(ctx: Context, realm: string, error?: OAuthError): void {
  const params = [`realm=${quoted(realm)}`]
  if (error !== undefined) {
    params.push(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`)
    if (error.code === 'insufficient_scope') params.push(`scope="openid"`)
  }
  ctx.set('WWW-Authenticate', `Bearer ${params.join(', ')}`)
  ctx.set('Cache-Control', 'no-store')
  ctx.status = error === undefined ? 401 : OAUTH_STATUS[error.code]
  ctx.body =
    error === undefined
      ? { error: 'invalid_token', error_description: 'no access token was sent' }
      : { error: error.code, error_description: error.description }
}

/** The token of the request: the Authorization header, or a POSTed form's `access_token` (§2.2). */
async function bearerToken(ctx: Context, maxBodyBytes: number): Promise<string | undefined> {
  const header = ctx.get('Authorization')
  let fromHeader: string | undefined
  if (header !== '') {
    const match = BEARER.exec(header)
    if (match?.[1] === undefined) {
      throw new OAuthError('invalid_request', 'the Authorization header is not a Bearer token')
    }
    fromHeader = match[1]
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
  return fromHeader ?? fromBody
}

/**
 * GET and POST /userinfo (OpenID Connect Core §5.3): `sub` and the claims the token's scope
 * releases, for a live access token with `openid`; errors as RFC 6750 §3 challenges.
 */
export function userInfoRoute(deps: UserInfoRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const { tenant } = ctx.state
    try {
      const token = await bearerToken(ctx, deps.maxBodyBytes)
      if (token === undefined) return challenge(ctx, tenant.issuer)
      const claims = await userInfo(token, tenant.context, deps.grants)
      ctx.set('Cache-Control', 'no-store')
      ctx.set('Pragma', 'no-cache')
      ctx.body = claims
    } catch (error) {
      if (!(error instanceof OAuthError) || error.code === 'server_error') throw error
      if (error.code === 'invalid_request') {
        // §3.1: a malformed request is 400, still with the challenge.
        ctx.set(
          'WWW-Authenticate',
          `Bearer realm=${quoted(tenant.issuer)}, error="invalid_request"`,
        )
        ctx.set('Cache-Control', 'no-store')
        ctx.status = 400
        ctx.body = { error: error.code, error_description: error.description }
        return
      }
      challenge(ctx, tenant.issuer, error)
    }
  }
}
