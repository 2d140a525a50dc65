import { handleTokenRequest, OAuthError, parseTokenRequestBody } from '@tessera/grants'
import type { GrantDeps } from '@tessera/grants'
import type { Middleware } from 'koa'
import type { TenantState } from '../http/tenant.js'
import { readTextBody } from '../http/body.js'
import { dpopInput, setDpopNonce } from '../http/dpop.js'
import type { Metrics } from '../observability/metrics.js'

export interface TokenRouteDeps {
  grants: GrantDeps
  maxBodyBytes: number
  metrics: Metrics
}

/**
 * POST /token (RFC 6749 §3.2). The response is never cached (§5.1), errors included.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1
 */
export function tokenRoute(deps: TokenRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const { tenant } = ctx.state
    const { headers } = ctx.request
    try {
      const raw = await readTextBody(ctx, deps.maxBodyBytes)
      const params = parseTokenRequestBody(raw, headers['content-type'] || undefined)
      const response = await handleTokenRequest(
        {
          params,
          authorization: headers.authorization || undefined,
          address: ctx.ip,
          dpop: dpopInput(ctx),
        },
        tenant.context,
        deps.grants,
      )
      deps.metrics.tokensIssued.inc({
        tenant: tenant.tenant.name,
        grant_type: params.grant_type ?? '',
        alg: tenant.context.signer.alg,
      })
      // Straight onto the response: the Content-Type is the one Koa would give a JSON body,
      // without its MIME table lookup, and ctx.set's per-call arrays are not needed here.
      const { res } = ctx
      res.setHeader('Cache-Control', 'no-store')
      res.setHeader('Pragma', 'no-cache')
      res.setHeader('Content-Type', 'application/json; charset=utf-8')
      await setDpopNonce(ctx, deps.grants)
      ctx.body = response
    } catch (error) {
      if (error instanceof OAuthError) {
        deps.metrics.tokenErrors.inc({ tenant: tenant.tenant.name, error: error.code })
      }
      throw error
    }
  }
}
