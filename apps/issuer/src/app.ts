import { Router } from '@koa/router'
import type { GrantDeps } from '@tessera/grants'
import Koa from 'koa'
import type { Logger } from 'pino'
import { errorHandler } from './http/errors.js'
import { HttpError } from './http/http-error.js'
import { methodNotAllowed, resolveTenant } from './http/tenant.js'
import type { TenantState } from './http/tenant.js'
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
 * @example
 * const app = createApp(deps)
 * app.listen(3000)
 */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.trustProxy })
  // Koa would print unexpected errors to stderr itself; ours are logged by errorHandler.
  app.silent = true

  app.use(requestLog(deps))
  app.use(errorHandler(deps.logger))

  // Operational endpoints answer on any host (DESIGN §4).
  const ops = new Router()
  ops.get('/healthz', healthzRoute())
  ops.get('/readyz', readyzRoute(deps))
  ops.get('/metrics', metricsRoute(deps.metrics.registry))
  app.use(ops.routes())

  const tenantRouter = new Router<TenantState>()
  tenantRouter.post('/token', tokenRoute(deps))
  tenantRouter.get('/authorize', authorizeRoute(deps))
  tenantRouter.post('/authorize', loginRoute(deps))
  tenantRouter.post('/revoke', revokeRoute(deps))
  tenantRouter.post('/introspect', introspectRoute(deps))
  tenantRouter.get('/.well-known/jwks.json', jwksRoute())
  tenantRouter.get('/.well-known/oauth-authorization-server', metadataRoute())
  tenantRouter.all('/token', methodNotAllowed(['POST']))
  tenantRouter.all('/authorize', methodNotAllowed(['GET', 'HEAD', 'POST']))
  tenantRouter.all('/revoke', methodNotAllowed(['POST']))
  tenantRouter.all('/introspect', methodNotAllowed(['POST']))
  tenantRouter.all('/.well-known/jwks.json', methodNotAllowed(['GET', 'HEAD']))
  tenantRouter.all('/.well-known/oauth-authorization-server', methodNotAllowed(['GET', 'HEAD']))
  // Resolved for every other path, so an unknown host gets the same 404 whatever it asks for.
  app.use(resolveTenant(deps.registry))
  app.use(tenantRouter.routes())
  app.use(() => {
    throw new HttpError(404, 'invalid_request', 'not found')
  })
  return app
}

/**
 * One log line per request: method, path without the query string, status, duration. Bodies
 * and headers are never logged, so secrets, passwords and tokens cannot reach the log.
 */
function requestLog(deps: Pick<AppDeps, 'logger' | 'metrics'>): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint()
    try {
      await next()
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      const route = KNOWN_ROUTES.has(ctx.path) ? ctx.path : 'other'
      deps.metrics.httpDuration.observe(
        { method: ctx.method, route, status: String(ctx.status) },
        seconds,
      )
      deps.logger.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(seconds * 1e5) / 100,
          tenant: (ctx.state as Partial<TenantState>).tenant?.tenant.name,
        },
        'request',
      )
    }
  }
}
