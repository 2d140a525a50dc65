import Router from '@koa/router'
import type { Middleware, Next } from 'koa'
import type { TenantRegistry, TenantRuntime } from '../tenants/runtime.js'
import { createCorsMiddleware } from './cors.js'
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
  /**
   * Tenant paths that answer CORS for the tenant's origins (`createCorsMiddleware`), OPTIONS
   * preflights included; each must be a key of `tenant`.
   */
  cors?: readonly string[]
  /**
   * Tenant paths served only by the tenants this says yes to; the others answer them as an
   * unknown path (404), whatever the method. Each must be a key of `tenant`.
   */
  only?: Readonly<Record<string, (runtime: TenantRuntime) => boolean>>
}

/** A path's methods in the order given, HEAD right after GET. */
function methodList<State>(handlers: RouteHandlers<State>): string {
  return Object.keys(handlers)
    .flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]))
    .join(', ')
}

/** Options of {@link addRoutes}. */
export interface AddRoutesOptions {
  /** Whether a middleware added before answers OPTIONS at the path: `Allow` then lists it. */
  answersOptions?: boolean
}

/**
 * Adds `handlers` at `path` to `router`, and a 405 with `Allow` for every other method there.
 * The 405 comes last: handlers answer without calling `next`, so it runs only when none of
 * them took the request's method. @koa/router's own `allowedMethods()` would answer OPTIONS
 * with 200 and an unlisted method with 501, and without the JSON error body.
 */
export function addRoutes<State>(
  router: Router<State>,
  path: string,
  handlers: RouteHandlers<State>,
  addOptions: AddRoutesOptions = {},
): void {
  for (const [method, handler] of Object.entries(handlers)) {
    if (handler !== undefined) router.register(path, [method], handler)
  }
  const allow = addOptions.answersOptions
    ? `${methodList(handlers)}, OPTIONS`
    : methodList(handlers)
  router.all(path, () => {
    throw new HttpError(405, 'invalid_request', `method not allowed; use ${allow}`, {
      Allow: allow,
    })
  })
}

/** The `next` of the last router: no route answered. */
export const notFound: Next = () => {
  throw new HttpError(404, 'invalid_request', 'not found')
}

/**
 * Dispatches a request with @koa/router (paths match case-insensitively, with or without one
 * trailing slash: its defaults): an operational endpoint on any host; otherwise the tenant
 * served at `ctx.host` (the Host header, or the nearest proxy's X-Forwarded-Host when
 * TRUST_PROXY counts proxies; see `createKoaApp`), resolved once, then its endpoint. An unknown
 * host gets the same 404 whatever it asks for, and learns nothing about the tenants that do
 * exist; a known path asked with another method gets 405 with `Allow`. The paths listed in
 * `cors` answer CORS for the tenant's origins and OPTIONS preflights (`createCorsMiddleware`).
 */
export function createRouter(options: RouterOptions): Middleware<Partial<TenantState>> {
  const operational = new Router()
  for (const [path, handler] of Object.entries(options.operational)) operational.get(path, handler)
  const tenant = new Router<TenantState>()
  const cors = new Set(options.cors)
  for (const path of cors) {
    if (!Object.hasOwn(options.tenant, path))
      throw new TypeError(`cors: ${path} is not a tenant path`)
  }
  const only = options.only ?? {}
  for (const path of Object.keys(only)) {
    if (!Object.hasOwn(options.tenant, path))
      throw new TypeError(`only: ${path} is not a tenant path`)
  }
  for (const [path, handlers] of Object.entries(options.tenant)) {
    const serves = only[path]
    // Before everything else at the path, its 405 included.
    if (serves !== undefined) {
      tenant.all(path, (ctx, next) => (serves(ctx.state.tenant) ? next() : notFound()))
    }
    // Registered first, so that it runs before the handlers and answers OPTIONS before the 405.
    if (cors.has(path)) tenant.all(path, createCorsMiddleware({ methods: methodList(handlers) }))
    addRoutes(tenant, path, handlers, { answersOptions: cors.has(path) })
  }

  // The routers add their fields (`params`, `router`, ...) to the context they are given.
  const operationalRoutes = operational.routes() as Middleware
  const tenantRoutes = tenant.routes() as Middleware<Partial<TenantState>>
  const { registry } = options

  // Whatever the operational routes do not answer (another path or method) goes to the tenant.
  return (ctx) =>
    operationalRoutes(ctx, () => {
      const { host } = ctx
      const runtime = host ? registry.byHost(host) : undefined
      if (runtime === undefined) {
        throw new HttpError(404, 'invalid_request', 'no tenant is served at this host')
      }
      ctx.state.tenant = runtime
      return tenantRoutes(ctx, notFound) as Promise<void>
    }) as unknown
}
