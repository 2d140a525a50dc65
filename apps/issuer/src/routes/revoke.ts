import { authenticateClient, parseTokenRequestBody, revokeToken } from '@tessera/grants'
import type { GrantDeps } from '@tessera/grants'
import type { Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import type { TenantState } from '../http/tenant.js'

/** What the client-authenticated endpoints (/revoke, /introspect) need. */
export interface ClientEndpointDeps {
  grants: GrantDeps
  maxBodyBytes: number
}

/**
 * POST /revoke (RFC 7009): 200 with an empty body whether or not the token was known (§2.2).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7009#section-2
 */
export function revokeRoute(deps: ClientEndpointDeps): Middleware<TenantState> {
  return async (ctx) => {
    const { tenant } = ctx.state
    const params = parseTokenRequestBody(
      await readTextBody(ctx, deps.maxBodyBytes),
      ctx.get('Content-Type') || undefined,
    )
    const { client } = await authenticateClient(
      {
        params,
        authorization: ctx.get('Authorization') || undefined,
        endpoint: 'revoke',
        address: ctx.ip,
      },
      tenant.context,
      deps.grants,
    )
    await revokeToken(params, client, tenant.context, deps.grants)
    ctx.set('Cache-Control', 'no-store')
    ctx.status = 200
    ctx.body = ''
  }
}
