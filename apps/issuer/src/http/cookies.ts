import type { Context } from 'koa'

/** The cookies that carry a session or a login binding, by their unprefixed names. */
export type BrowserCookie = 'tessera_session' | 'tessera_login'

/** How a browser cookie is written: see {@link writeBrowserCookie}. */
export interface BrowserCookieOptions {
  /** The value, or undefined to clear the cookie. */
  value: string | undefined
  /** Lifetime in seconds from now (ignored when clearing). */
  maxAgeSeconds: number
  /** The clock's now, in milliseconds since the epoch, for `Expires`. */
  now: number
  /**
   * `start`: always `Secure`, also behind a proxy that terminates TLS without TRUST_PROXY
   * telling the issuer so; `dev`: only on an https request.
   */
  secureCookies: boolean
}

/**
 * The name a browser cookie has on this request: `__Host-` prefixed when the request reached the
 * issuer over https (`ctx.secure` follows the nearest proxy's X-Forwarded-Proto when TRUST_PROXY
 * counts proxies). A browser accepts a `__Host-` cookie only from a secure origin, for `Path=/`
 * and without `Domain`, so a sibling subdomain cannot plant one (RFC 6265bis §4.1.3.2).
 */
export function browserCookieName(ctx: Context, cookie: BrowserCookie): string {
  return ctx.secure ? `__Host-${cookie}` : cookie
}

/**
 * The value of a browser cookie under the name that matches the request's scheme only: over
 * https an unprefixed cookie of the same name, which another host of the site could have
 * tossed in, is ignored.
 */
export function readBrowserCookie(ctx: Context, cookie: BrowserCookie): string | undefined {
  return ctx.cookies.get(browserCookieName(ctx, cookie))
}

/**
 * Sets or clears a browser cookie: host-only (no `Domain`), `Path=/`, `HttpOnly` (no script
 * ever needs it), `SameSite=Lax` (sent on the top-level navigations that /authorize and /logout
 * are, never on a cross-site POST or subresource), `Secure` on https or under `start`.
 */
export function writeBrowserCookie(
  ctx: Context,
  cookie: BrowserCookie,
  options: BrowserCookieOptions,
): void {
  // Written here rather than with ctx.cookies, which sends Expires alone and refuses `Secure`
  // on a plain http request: Max-Age does not depend on the browser's clock agreeing with ours
  // (RFC 6265 §5.3 prefers it), and Expires stays for the rare client that knows nothing else.
  // Values are base64url, names fixed.
  const { value, now } = options
  const seconds = value === undefined ? 0 : Math.max(1, Math.floor(options.maxAgeSeconds))
  const attributes = [
    `${browserCookieName(ctx, cookie)}=${value ?? ''}`,
    'Path=/',
    `Max-Age=${seconds}`,
    `Expires=${new Date(value === undefined ? 0 : now + seconds * 1000).toUTCString()}`,
    'SameSite=Lax',
    ...(options.secureCookies || ctx.secure ? ['Secure'] : []),
    'HttpOnly',
  ]
  ctx.append('Set-Cookie', attributes.join('; '))
}
