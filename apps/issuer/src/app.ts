import type { TLSSocket } from 'node:tls'
import type { GrantDeps, RegistrationDeps } from '@tessera/grants'
import Koa from 'koa'
import type { Context, Middleware, Request } from 'koa'
import type { Logger } from 'pino'
import { respondWithError } from './http/errors.js'
import { createRouter } from './http/router.js'
import type { TenantState } from './http/tenant.js'
import { createRequestLogger } from './observability/logger.js'
import type { Metrics } from './observability/metrics.js'
import { authorizeRoute, loginRoute } from './routes/authorize.js'
import { healthzRoute, readyzRoute } from './routes/health.js'
import { introspectRoute } from './routes/introspect.js'
import { jwksRoute } from './routes/jwks.js'
import { logoutRoute } from './routes/logout.js'
import { metadataRoute, openIdConfigurationRoute } from './routes/metadata.js'
import { registerRoute, registrationClientRoutes, registrationEnabled } from './routes/register.js'
import { revokeRoute } from './routes/revoke.js'
import { tokenRoute } from './routes/token.js'
import { userInfoRoute } from './routes/userinfo.js'
import type { TenantRegistry } from './tenants/runtime.js'

/** Everything the HTTP app needs, built by the CLI (or a test) and passed in. */
export interface AppDeps {
  registry: TenantRegistry
  grants: GrantDeps
  /** Dynamic client registration: the store's registrations and consents, and its throttle. */
  registration: RegistrationDeps
  logger: Logger
  metrics: Metrics
  maxBodyBytes: number
  /** TRUST_PROXY: `false`, or how many proxies stand in front (see {@link KoaAppOptions}). */
  trustProxy: false | number
  /** Whether configuration is loaded, for /readyz. */
  ready: () => boolean
  /** Throws when the store does not answer, for /readyz. */
  ping: () => Promise<void>
  /** `start`: session cookies are always `Secure` (see `setSessionCookie`). */
  secureCookies: boolean
}

/**
 * The tenant endpoints that browser apps on other origins may call (CORS for the tenant's
 * origins, docs/cors.md). Never /introspect: it is for resource servers, and a browser must not
 * learn from it whether a token is active; nor /authorize and /logout, which are navigations.
 */
export const CORS_PATHS: readonly string[] = [
  '/token',
  '/revoke',
  '/userinfo',
  '/.well-known/jwks.json',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
]

// Metric labels come from this fixed list so that probing random paths cannot grow them.
const KNOWN_ROUTES = new Set([
  '/token',
  '/authorize',
  '/revoke',
  '/introspect',
  '/.well-known/jwks.json',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
  '/userinfo',
  '/logout',
  '/register',
  '/healthz',
  '/readyz',
])

/** How a listener's Koa app is built: see {@link createKoaApp}. */
export interface KoaAppOptions {
  /**
   * `false`: the socket's address, the Host header and plain http are the truth. `n` proxies:
   * `ctx.ip` is the n-th entry from the right of X-Forwarded-For (each proxy appends the address
   * it was reached from, so entries further left are the client's own words), and `ctx.host` and
   * `ctx.protocol` are the right-most X-Forwarded-Host and X-Forwarded-Proto values, which the
   * nearest proxy wrote.
   */
  trustProxy: false | number
  logger: Logger
  /** Answers the request; whatever it throws is answered by `respondWithError`. */
  handle: Middleware
  /** Called once per request after the answer is decided, errors included. */
  observe?: (ctx: Context, seconds: number) => void
}

/**
 * The one Koa middleware of every listener (tenant and admin): the headers every response
 * carries, the request's handler, the error answer, and the observation. Each further Koa
 * middleware would cost every request a dispatch and a promise.
 */
export function createKoaApp(options: KoaAppOptions): Koa {
  const { trustProxy, logger, handle, observe } = options
  const app = new Koa({
    proxy: trustProxy !== false,
    maxIpsCount: trustProxy === false ? 0 : trustProxy,
  })
  if (trustProxy !== false) trustNearestProxy(app)
  // Koa would print unexpected errors to stderr itself; ours are logged by respondWithError.
  app.silent = true
  const end = (): Promise<void> => Promise.resolve()

  app.use(async (ctx) => {
    const started = process.hrtime.bigint()
    // Errors and 404s included: browsers must not guess a type other than the declared one
    // (a JSON error body read as HTML).
    ctx.res.setHeader('X-Content-Type-Options', 'nosniff')
    try {
      await handle(ctx, end)
    } catch (error) {
      respondWithError(ctx, error, logger)
    } finally {
      observe?.(ctx, Number(process.hrtime.bigint() - started) / 1e9)
    }
  })
  return app
}

/** The right-most value of a comma-separated header: the one the nearest proxy added. */
function nearest(value: string): string {
  return value.slice(value.lastIndexOf(',') + 1).trim()
}

/**
 * Koa reads the left-most X-Forwarded-Host and X-Forwarded-Proto values, which a client can
 * write itself when the proxy appends rather than replaces; the nearest proxy's are the
 * right-most. Everything derived (`hostname`, `origin`, `secure`, ...) follows these two.
 */
function trustNearestProxy(app: Koa): void {
  Object.defineProperties(app.request, {
    host: {
      get(this: Request): string {
        // Without a forwarded value, the Host header: never Koa's reading of the proxy header,
        // which would fall back to its left-most value.
        const host = nearest(this.get('X-Forwarded-Host')) || this.get('Host')
        if (!host.includes('@')) return host
        // Userinfo is not part of a host (RFC 9110 §4.2.4); as Koa drops it.
        try {
          return new URL(`http://${host}`).host
        } catch {
          return ''
        }
      },
    },
    protocol: {
      get(this: Request): string {
        if ((this.socket as Partial<TLSSocket>).encrypted === true) return 'https'
        return nearest(this.get('X-Forwarded-Proto')).toLowerCase() || 'http'
      },
    },
  })
}

/**
 * Builds the issuer's tenant-facing Koa app. No I/O happens here; the CLI calls `listen`.
 *
 * It routes with @koa/router (`createRouter`), answers errors (`respondWithError`) and logs
 * and measures every request, errors included. Metrics are served by the admin app, on a listener
 * of their own (`createAdminApp`).
 *
 * @example
 * const app = createApp(deps)
 * app.listen(3000)
 */
export function createApp(deps: AppDeps): Koa {
  const router = createRouter({
    registry: deps.registry,
    // Probes answer on any host; /metrics is on the admin listener only.
    operational: {
      '/healthz': healthzRoute(),
      '/readyz': readyzRoute(deps),
    },
    tenant: {
      '/token': { POST: tokenRoute(deps) },
      '/authorize': { GET: authorizeRoute(deps), POST: loginRoute(deps) },
      '/revoke': { POST: revokeRoute(deps) },
      '/introspect': { POST: introspectRoute(deps) },
      '/.well-known/jwks.json': { GET: jwksRoute() },
      '/.well-known/oauth-authorization-server': { GET: metadataRoute() },
      '/.well-known/openid-configuration': { GET: openIdConfigurationRoute() },
      '/userinfo': { GET: userInfoRoute(deps), POST: userInfoRoute(deps) },
      '/logout': { GET: logoutRoute(deps), POST: logoutRoute(deps) },
      '/register': { POST: registerRoute(deps) },
      '/register/:client_id': registrationClientRoutes(deps),
    },
    // Registration is for native and server clients: no CORS (docs/dynamic-clients.md).
    cors: CORS_PATHS,
    only: { '/register': registrationEnabled, '/register/:client_id': registrationEnabled },
  })
  const { logger, metrics } = deps
  const requestLogger = createRequestLogger(logger)

  return createKoaApp({
    trustProxy: deps.trustProxy,
    logger,
    handle: router as Middleware,
    observe(ctx, seconds) {
      // One log line per request: method, path without the query string, status, duration.
      // Bodies and headers are never logged, so secrets, passwords and tokens cannot reach it.
      const { method, path, status } = ctx
      metrics.httpDuration.observe(
        { method, route: KNOWN_ROUTES.has(path) ? path : 'other', status: String(status) },
        seconds,
      )
      const state = ctx.state as Partial<TenantState>
      requestLogger.info(
        {
          method,
          path,
          status,
          ms: Math.round(seconds * 1e5) / 100,
          tenant: state.tenant?.tenant.name,
        },
        'request',
      )
    },
  })
}
