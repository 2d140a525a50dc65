import Router from '@koa/router'
import type Koa from 'koa'
import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { createKoaApp } from './app.js'
import { addRoutes, notFound } from './http/router.js'
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
  // The paths match exactly: this port is for machines, which send what they were given.
  const router = new Router({ sensitive: true, strict: true })
  addRoutes(router, '/metrics', { GET: metricsRoute(deps.registry) })
  addRoutes(router, '/healthz', { GET: healthzRoute() })
  addRoutes(router, '/readyz', { GET: readyzRoute(deps) })
  const routes = router.routes() as Middleware
  return createKoaApp({
    // Scrapers and probes reach this port directly; no proxy header is believed here.
    trustProxy: false,
    logger: deps.logger,
    handle: (ctx) => routes(ctx, notFound) as unknown,
  })
}
