import type { Middleware } from 'koa'
import type { TenantState } from '../http/tenant.js'

/**
 * GET /.well-known/jwks.json: the tenant's published public keys. Short caching
 * lets verifiers and proxies share a copy without delaying a rotation by much.
 */
export function jwksRoute(): Middleware<TenantState> {
  return (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300')
    ctx.type = 'application/jwk-set+json'
    ctx.body = JSON.stringify(ctx.state.tenant.keyRing.jwks())
  }
}
