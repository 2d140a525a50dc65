import type { Middleware } from 'koa'
import type { TenantState } from '../http/tenant.js'

/**
 * GET /.well-known/jwks.json: the tenant's published public keys. Short caching
 * lets verifiers and proxies share a copy without delaying a rotation by much. A tenant's first
 * request waits for its first key (made once, however many ask together): a JWKS without the
 * key that is about to sign would be cached by verifiers for those five minutes.
 */
export function jwksRoute(): Middleware<TenantState> {
  return async (ctx) => {
    await ctx.state.tenant.keyRing.ensureKey()
    ctx.set('Cache-Control', 'public, max-age=300')
    ctx.type = 'application/jwk-set+json'
    ctx.body = JSON.stringify(ctx.state.tenant.keyRing.jwks())
  }
}
