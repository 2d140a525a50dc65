import type Koa from 'koa'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { createKoaApp } from './app.js'
import { HttpError } from './http/http-error.js'
import { healthzRoute, metricsRoute, readyzRoute } from './routes/health.js'

/** What the admin listener serves, built by the issuer and passed in. */
export interface AdminAppDeps {
  /** The Prometheus registry /metrics renders. */
  registry: Registry
  logger: Logger
  /** Whether configuration is loaded, for /readyz. */
  ready: () => boolean
  /** Throws when the store does not answer, for /readyz. */
  ping: () => Promise<void>
}

/**
 * Builds the admin listener's Koa app (ADMIN_PORT on ADMIN_HOST): /metrics, /healthz and
 * /readyz, on any Host. /metrics names every tenant, so it is kept off the tenants' port, where
 * anyone who can reach a tenant could read it. No I/O happens here; the CLI calls `listen`.
 *
 * @example
 * const admin = createAdminApp({ registry, logger, ready, ping })
 * admin.listen(9464, '127.0.0.1')
 */
export function createAdminApp(deps: AdminAppDeps): Koa {
  const routes = new Map<string, Middleware>([
    ['/metrics', metricsRoute(deps.registry)],
    ['/healthz', healthzRoute()],
    ['/readyz', readyzRoute(deps)],
  ])
  const end = (): Promise<void> => Promise.resolve()
  return createKoaApp({
    // Scrapers and probes reach this port directly; no proxy header is believed here.
    trustProxy: false,
    logger: deps.logger,
    handle: (ctx: Context) => {
      // The paths match exactly: this port is for machines, which send what they were given.
      const route = routes.get(ctx.path)
      if (route === undefined) throw new HttpError(404, 'invalid_request', 'not found')
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
        throw new HttpError(405, 'invalid_request', 'method not allowed; use GET, HEAD', {
          Allow: 'GET, HEAD',
        })
      }
      return route(ctx, end) as unknown
    },
  })
}
