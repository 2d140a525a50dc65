import Router from '@koa/router'
import type { Settings } from '@tessera/config-schema'
import type { KeyStore } from '@tessera/keys'
import type Koa from 'koa'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { createKoaApp } from '../app.js'
import { createAdminAuthenticator } from '../http/admin-auth.js'
import { ProblemError, respondWithProblem } from '../http/problem.js'
import { addRoutes, notFound } from '../http/router.js'
import { adminApiRoutes } from '../routes/admin-api.js'
import type { AdminApiDeps } from '../routes/admin-api.js'
import { healthzRoute, metricsRoute, readyzRoute } from '../routes/health.js'
import type { TenantRegistry } from '../tenants/runtime.js'

/** What the admin listener serves, built by the issuer and passed in. */
export interface AdminAppDeps {
  /** The Prometheus registry /metrics renders (in the primary of `--workers`, the workers'). */
  registry: Pick<Registry, 'contentType' | 'metrics'>
  logger: Logger
  /** Whether configuration is loaded, for /readyz. */
  ready: () => boolean
  /** Throws when the store does not answer, for /readyz. */
  ping: () => Promise<void>
  /** In the primary of `--workers`: what keeps /readyz at 503 on the workers' side, if anything. */
  workers?: () => Promise<string | undefined>
  /**
   * The admin API (`/admin/*`), served only when ADMIN_TOKEN is set: `token` is its bearer
   * token. Without it, /admin paths are unknown paths like any other.
   */
  api?: Omit<AdminApiDeps, 'logger'> & { token: string }
}

/**
 * The admin API's part of {@link AdminAppDeps} as `settings` shape it: with ADMIN_TOKEN, the API
 * over `registry` and `keys`, its rotations and revocations shaped as the tenants' key rings are
 * (grace, publish-ahead, encryption); without, nothing.
 */
export function adminApiOptions(
  settings: Settings,
  served: { registry: TenantRegistry; keys: KeyStore; now: () => number },
): Pick<AdminAppDeps, 'api'> {
  if (settings.adminToken === undefined) return {}
  return {
    api: {
      token: settings.adminToken,
      registry: served.registry,
      keys: served.keys,
      graceMs: settings.jwksGraceHours * 3_600_000,
      publishAheadMs: settings.keyPublishAheadSeconds * 1000,
      now: served.now,
      ...(settings.keyEncryptionSecret === undefined
        ? {}
        : { encryptionSecret: settings.keyEncryptionSecret }),
    },
  }
}

// The longest path or parameter a log line repeats: the rest of a hostile one is cut.
const LOGGED_LENGTH = 200

const clip = (value: string | undefined): string | undefined =>
  value === undefined || value.length <= LOGGED_LENGTH ? value : `${value.slice(0, LOGGED_LENGTH)}…`

const isAdminPath = (path: string): boolean => path === '/admin' || path.startsWith('/admin/')

/**
 * The router of the admin API. Its paths match exactly, as the admin listener's others do.
 * Exported for the test that holds the OpenAPI description to the routes.
 */
export function createAdminApiRouter(deps: AdminApiDeps): Router {
  const router = new Router({ sensitive: true, strict: true })
  for (const [path, handlers] of Object.entries(adminApiRoutes(deps))) {
    addRoutes(router, path, handlers)
  }
  return router
}

/**
 * Builds the admin listener's Koa app (ADMIN_PORT on ADMIN_HOST): /metrics, /healthz and
 * /readyz, on any Host, and with ADMIN_TOKEN the admin API under /admin. /metrics names every
 * tenant, so it is kept off the tenants' port, where anyone who can reach a tenant could read it.
 * No I/O happens here; the CLI calls `listen`.
 *
 * Every /admin request is logged at info, answered or refused: the client address, the method,
 * the route, the tenant and kid it names, the status. Never a header, so never the token.
 *
 * @example
 * const admin = createAdminApp({ registry, logger, ready, ping })
 * admin.listen(9464, '127.0.0.1')
 */
export function createAdminApp(deps: AdminAppDeps): Koa {
  const { logger, api } = deps
  // The paths match exactly: this port is for machines, which send what they were given.
  const router = new Router({ sensitive: true, strict: true })
  addRoutes(router, '/metrics', { GET: metricsRoute(deps.registry) })
  addRoutes(router, '/healthz', { GET: healthzRoute() })
  addRoutes(router, '/readyz', { GET: readyzRoute(deps) })
  const routes = router.routes() as Middleware

  let handle: Middleware = (ctx) => routes(ctx, notFound) as unknown
  if (api !== undefined) {
    const authenticate = createAdminAuthenticator({ token: api.token, now: api.now })
    const apiRoutes = createAdminApiRouter({ ...api, logger }).routes() as Middleware
    const noRoute = (): never => {
      throw new ProblemError(404, 'no admin API route at this path')
    }
    const other = handle
    handle = async (ctx) => {
      if (!isAdminPath(ctx.path)) {
        await other(ctx, notFound)
        return
      }
      // Key lists and rotation results are of the moment: no cache may keep them.
      ctx.set('Cache-Control', 'no-store')
      try {
        // Before routing: who is not authenticated learns nothing, not even which paths exist.
        authenticate(ctx)
        await apiRoutes(ctx, noRoute)
      } catch (error) {
        respondWithProblem(ctx, error, logger)
      }
    }
  }

  return createKoaApp({
    // Scrapers and probes reach this port directly; no proxy header is believed here.
    trustProxy: false,
    logger,
    handle,
    observe: api === undefined ? undefined : (ctx, seconds) => logAdminCall(ctx, seconds, logger),
  })
}

function logAdminCall(ctx: Context, seconds: number, logger: Logger): void {
  if (!isAdminPath(ctx.path)) return
  const params = (ctx.params ?? {}) as { tenant?: string; kid?: string }
  const matched = (ctx as Context & { _matchedRoute?: string })._matchedRoute
  logger.info(
    {
      client: ctx.ip,
      method: ctx.method,
      route: matched ?? clip(ctx.path),
      tenant: clip(params.tenant),
      kid: clip(params.kid),
      status: ctx.status,
      ms: Math.round(seconds * 1e5) / 100,
    },
    'admin call',
  )
}
