/**
 * CORS for browser apps on another origin: which origins a tenant allows, and the middleware
 * that answers them on the endpoints listed in `createApp`.
 *
 * A small middleware rather than @koa/cors: the allowed origins belong to the tenant the Host
 * header chose, the rule applies to some paths of the router only, and a preflight must be
 * answered before the router's 405 for methods a path does not have.
 *
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 * @see docs/cors.md
 * @module
 */
import type { Tenant } from '@tessera/config-schema'
import type { Middleware } from 'koa'
import type { TenantState } from './tenant.js'

/**
 * Request headers a browser app may send: client authentication (`Authorization: Basic`), a
 * JSON body (`Content-Type: application/json` is not CORS-safelisted, so it is preflighted) and
 * a DPoP proof (RFC 9449).
 */
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, DPoP'
/**
 * Response headers a browser app may read beyond the safelisted ones (Cache-Control,
 * Content-Type, Pragma, ...): the challenge of a 401, the wait of a 429 or 503, and the DPoP
 * nonce its next proof must carry.
 */
export const CORS_EXPOSE_HEADERS = 'WWW-Authenticate, Retry-After, DPoP-Nonce'
/**
 * How long a browser may reuse a preflight answer. Ten minutes keeps a removed origin from
 * sending preflighted requests for long; the actual responses lose their CORS headers at once.
 */
export const CORS_MAX_AGE_SECONDS = 600

// The redirect URIs that match at any port (RFC 8252 §7.3), as the authorization endpoint
// reads them: a native app's, whatever port is written.
const LOOPBACK_REDIRECT = /^http:\/\/(?:127\.0\.0\.1|\[::1\])(?:[:/?]|$)/

/**
 * The origin of a redirect URI when a page there is a browser app's: http(s) only, as the
 * browser serializes it (lower-case host, no default port). A private-use scheme
 * (`com.example.app:/cb`) and a loopback URI (`http://127.0.0.1/cb`) are a native app's: it
 * sends no Origin, and the loopback port it listens on is any, where an origin is one port.
 */
function redirectUriOrigin(uri: string): string | undefined {
  if (LOOPBACK_REDIRECT.test(uri)) return undefined
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return undefined
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined
}

/**
 * The origins a tenant answers CORS for: the origin of every http(s) redirect URI of its clients
 * except loopback ones, and every `allowed_origins` entry. A loopback redirect URI
 * (`http://127.0.0.1:8080/cb`) contributes nothing: it matches at any port, so its written
 * origin says nothing about where a page is; a page served from a loopback address lists its
 * exact origin in `allowed_origins`.
 *
 * Built once per tenant build, reloads included; looking an origin up is one Set lookup.
 */
export function corsOrigins(tenant: Tenant): ReadonlySet<string> {
  const origins = new Set<string>()
  for (const client of tenant.clients) {
    for (const uri of client.redirectUris) {
      const origin = redirectUriOrigin(uri)
      if (origin !== undefined) origins.add(origin)
    }
    for (const origin of client.allowedOrigins ?? []) origins.add(origin)
  }
  return origins
}

/** Options of {@link createCorsMiddleware}. */
export interface CorsOptions {
  /** The path's methods, as its `Allow` header lists them (`POST`, or `GET, HEAD`). */
  methods: string
}

/**
 * The CORS middleware of one tenant path, run before the path's handlers.
 *
 * Every response of the path varies by Origin (`Vary: Origin`), allowed or not, so that a cache
 * never hands one origin's answer to another. A request whose Origin is exactly one of the
 * tenant's gets `Access-Control-Allow-Origin` with that origin (never `*`, and no
 * `Access-Control-Allow-Credentials`: these endpoints use no cookies), errors included, so the
 * app can read an `invalid_grant`. Any other Origin, `null`, or none: no CORS headers, and the
 * request is answered as it would be without CORS.
 *
 * OPTIONS is answered here, 204 with `Allow`, whatever the origin: with the preflight headers
 * for an allowed origin, without them for any other (the browser then refuses the request).
 */
export function createCorsMiddleware(options: CorsOptions): Middleware<TenantState> {
  const allowMethods = options.methods
  const allow = `${allowMethods}, OPTIONS`
  const maxAge = String(CORS_MAX_AGE_SECONDS)
  return (ctx, next) => {
    // Straight onto the response: this runs on every request of these paths, and Koa's `vary`
    // and `set` parse and copy what a fresh response does not need. Handlers that vary by
    // more append to this with `ctx.vary`.
    const { res } = ctx
    res.setHeader('Vary', 'Origin')
    const origin = ctx.req.headers.origin
    // An exact, byte-for-byte match: browsers serialize the origin one way only, and the
    // configuration holds that form (config-schema refuses any other spelling).
    const allowed = origin !== undefined && ctx.state.tenant.corsOrigins.has(origin)
    if (allowed) res.setHeader('Access-Control-Allow-Origin', origin)
    if (ctx.method !== 'OPTIONS') {
      if (allowed) res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS)
      return next()
    }
    ctx.status = 204
    res.setHeader('Allow', allow)
    if (allowed && ctx.req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', allowMethods)
      res.setHeader('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS)
      res.setHeader('Access-Control-Max-Age', maxAge)
    }
    return Promise.resolve()
  }
}
