import { authenticateClient, introspectToken, parseTokenRequestBody } from '@tessera/grants'
import type { Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import type { TenantState } from '../http/tenant.js'
import type { ClientEndpointDeps } from './revoke.js'

/**
 * POST /introspect (RFC 7662), for confidential clients.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7662#section-2
 */
export function introspectRoute(deps: ClientEndpointDeps): Middleware<TenantState> {
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
        endpoint: 'introspect',
        address: ctx.ip,
      },
      tenant.context,
      deps.grants,
    )
    const response = await introspectToken(params, client, tenant.context, deps.grants)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = response
  }
}
