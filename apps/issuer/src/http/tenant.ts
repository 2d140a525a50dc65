import type { Middleware } from 'koa'
import type { TenantRegistry, TenantRuntime } from '../tenants.js'
import { HttpError } from './http-error.js'

/** Koa state after tenant resolution. */
export interface TenantState {
  tenant: TenantRuntime
}

/**
 * Resolves the tenant once per request from the Host header (or X-Forwarded-Host when
 * TRUST_PROXY is on: Koa's `ctx.host` honours `app.proxy`). An unknown host learns nothing
 * about the tenants that do exist.
 */
export function resolveTenant(registry: TenantRegistry): Middleware<TenantState> {
  return async (ctx, next) => {
    const runtime = ctx.host ? registry.byHost(ctx.host) : undefined
    if (runtime === undefined) {
      throw new HttpError(404, 'invalid_request', 'no tenant is served at this host')
    }
    ctx.state.tenant = runtime
    await next()
  }
}

/** Answers 405 with `Allow` for a path that exists but not for this method. */
export function methodNotAllowed(allowed: readonly string[]): Middleware {
  return () => {
    throw new HttpError(405, 'invalid_request', `method not allowed; use ${allowed.join(', ')}`, {
      Allow: allowed.join(', '),
    })
  }
}
