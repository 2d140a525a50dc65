import type { GrantDeps } from '@tessera/grants'
import Koa from 'koa'
import type { Logger } from 'pino'
import { respondWithError } from './http/errors.js'
import { createRouter } from './http/router.js'
import type { TenantState } from './http/tenant.js'
import { createRequestLogger } from './logger.js'
import type { Metrics } from './metrics.js'
import { authorizeRoute, loginRoute } from './routes/authorize.js'
import { healthzRoute, metricsRoute, readyzRoute } from './routes/health.js'
import { introspectRoute } from './routes/introspect.js'
import { jwksRoute } from './routes/jwks.js'
import { metadataRoute } from './routes/metadata.js'
import { revokeRoute } from './routes/revoke.js'
import { tokenRoute } from './routes/token.js'
import type { TenantRegistry } from './tenants.js'

/** Everything the HTTP app needs, built by the CLI (or a test) and passed in. */
export interface AppDeps {
  registry: TenantRegistry
  grants: GrantDeps
  logger: Logger
  metrics: Metrics
  maxBodyBytes: number
  trustProxy: boolean
  /** Whether configuration is loaded, for /readyz. */
  ready: () => boolean
  /** Throws when the store does not answer, for /readyz. */
  ping: () => Promise<void>
}

// Metric labels come from this fixed list so that probing random paths cannot grow them.
const KNOWN_ROUTES = new Set([
  '/token',
  '/authorize',
  '/revoke',
  '/introspect',
  '/.well-known/jwks.json',
  '/.well-known/oauth-authorization-server',
  '/healthz',
  '/readyz',
  '/metrics',
])

/**
 * Builds the issuer's Koa app. No I/O happens here; the CLI calls `listen`.
 *
 * The app is one middleware: it routes with one lookup (`createRouter`), answers errors
 * (`respondWithError`) and logs and measures every request, errors included. Each further Koa
 * middleware would cost every request a dispatch and a promise.
 *
 * @example
 * const app = createApp(deps)
 * app.listen(3000)
 */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa<Partial<TenantState>>({ proxy: deps.trustProxy })
  // Koa would print unexpected errors to stderr itself; ours are logged by respondWithError.
  app.silent = true

  const router = createRouter({
    registry: deps.registry,
    // Operational endpoints answer on any host (DESIGN §4).
    operational: {
      '/healthz': healthzRoute(),
      '/readyz': readyzRoute(deps),
      '/metrics': metricsRoute(deps.metrics.registry),
    },
    tenant: {
      '/token': { POST: tokenRoute(deps) },
      '/authorize': { GET: authorizeRoute(deps), POST: loginRoute(deps) },
      '/revoke': { POST: revokeRoute(deps) },
      '/introspect': { POST: introspectRoute(deps) },
      '/.well-known/jwks.json': { GET: jwksRoute() },
      '/.well-known/oauth-authorization-server': { GET: metadataRoute() },
    },
  })
  const { logger, metrics } = deps
  const requestLogger = createRequestLogger(logger)

  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint()
    try {
      await router(ctx, next)
    } catch (error) {
      respondWithError(ctx, error, logger)
    } finally {
      // One log line per request: method, path without the query string, status, duration.
      // Bodies and headers are never logged, so secrets, passwords and tokens cannot reach it.
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      const { method, path, status } = ctx
      metrics.httpDuration.observe(
        { method, route: KNOWN_ROUTES.has(path) ? path : 'other', status: String(status) },
        seconds,
      )
      requestLogger.info(
        {
          method,
          path,
          status,
          ms: Math.round(seconds * 1e5) / 100,
          tenant: ctx.state.tenant?.tenant.name,
        },
        'request',
      )
    }
  })
  return app
}
