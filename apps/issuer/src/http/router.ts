import type { Context, Middleware, Next } from 'koa'
import type { TenantRegistry } from '../tenants.js'
import { HttpError } from './http-error.js'
import type { TenantState } from './tenant.js'

/** The handlers of one path, by method; a GET handler also answers HEAD. */
export type RouteHandlers<State> = Partial<
  Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', Middleware<State>>
>

export interface RouterOptions {
  registry: TenantRegistry
  /** Operational endpoints: GET (and HEAD) on any host, before any tenant is resolved. */
  operational: Readonly<Record<string, Middleware>>
  /** The endpoints of a tenant, served on its hosts only. */
  tenant: Readonly<Record<string, RouteHandlers<TenantState>>>
}

interface TenantRoute {
  handlers: RouteHandlers<TenantState>
  /** The `Allow` header of a 405. */
  allow: string
}

// Handlers answer and never call next: the router is the last middleware.
const end: Next = () => Promise.resolve()

/**
 * A path as the routes are looked up: paths match case-insensitively and with or without one
 * trailing slash, as @koa/router's defaults had them (`sensitive: false`, `strict: false`).
 */
function routeKey(path: string): string {
  const key = path.toLowerCase()
  return key.length > 1 && key.endsWith('/') ? key.slice(0, -1) : key
}

/**
 * Dispatches a request with one lookup: an operational endpoint on any host; otherwise the
 * tenant served at `ctx.host` (the Host header, or the nearest proxy's X-Forwarded-Host when
 * TRUST_PROXY counts proxies; see `createKoaApp`), resolved once, then its endpoint. An unknown
 * host gets the same 404 whatever it asks for, and learns nothing about the tenants that do
 * exist; a known path asked with another method gets 405 with `Allow`.
 */
export function createRouter(options: RouterOptions): Middleware<Partial<TenantState>> {
  const operational = new Map(
    Object.entries(options.operational).map(([path, handler]) => [routeKey(path), handler]),
  )
  const tenantRoutes = new Map<string, TenantRoute>()
  for (const [path, handlers] of Object.entries(options.tenant)) {
    const methods = Object.keys(handlers)
    if (handlers.GET !== undefined) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD')
    tenantRoutes.set(routeKey(path), { handlers, allow: methods.join(', ') })
  }
  const { registry } = options

  return (ctx: Context & { state: Partial<TenantState> }) => {
    const key = routeKey(ctx.path)
    const { method } = ctx
    const get = method === 'GET' || method === 'HEAD'
    const ops = get ? operational.get(key) : undefined
    // Koa middleware are typed to return any; these return a promise or nothing.
    if (ops !== undefined) return ops(ctx, end) as unknown

    const { host } = ctx
    const runtime = host ? registry.byHost(host) : undefined
    if (runtime === undefined) {
      throw new HttpError(404, 'invalid_request', 'no tenant is served at this host')
    }
    ctx.state.tenant = runtime
    const route = tenantRoutes.get(key)
    if (route === undefined) throw new HttpError(404, 'invalid_request', 'not found')
    const handler = get
      ? route.handlers.GET
      : Object.hasOwn(route.handlers, method)
        ? route.handlers[method as keyof RouteHandlers<TenantState>]
        : undefined
    if (handler === undefined) {
      throw new HttpError(405, 'invalid_request', `method not allowed; use ${route.allow}`, {
        Allow: route.allow,
      })
    }
    return handler(ctx, end) as unknown
  }
}
