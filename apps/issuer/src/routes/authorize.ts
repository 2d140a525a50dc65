import { beginLogin, completeLogin, parseAuthorizationRequest } from '@tessera/grants'
import type { AuthorizationRequest, GrantDeps } from '@tessera/grants'
import type { Context, Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import type { TenantState } from '../http/tenant.js'
import { STYLE_HASH } from '../views/html.js'
import { renderErrorPage, renderLoginPage } from '../views/login.js'

/** The cookie that binds a login form to the browser it was shown to. */
const BINDING_COOKIE = 'tessera_login'

export interface AuthorizeRouteDeps {
  grants: GrantDeps
  maxBodyBytes: number
}

// CSP3 scheme-source and host-source grammar (no path): what a source may be made of, so that
// no configured value can close the directive and add one of its own.
const CSP_SOURCE = /^[a-z][a-z0-9+.-]*:(\/\/(\*|[a-z0-9-]+(\.[a-z0-9-]+)*)(:\d+)?)?$/i

/**
 * The CSP source that allows the redirect to `redirectUri`: its origin (with the port), or for a
 * private-use scheme (RFC 8252 §7.1) the scheme itself, since such a URI has no origin (its
 * `origin` is the string "null", which matches nothing). A host source cannot name an IPv6
 * literal (Chromium drops `http://[::1]:port` as invalid), so `[::1]` becomes any host at that
 * exact port.
 */
function formActionSource(redirectUri: string): string | undefined {
  const url = new URL(redirectUri)
  let source = url.origin
  if (url.protocol !== 'http:' && url.protocol !== 'https:') source = url.protocol
  else if (url.hostname.startsWith('[')) {
    source = `${url.protocol}//*${url.port === '' ? '' : `:${url.port}`}`
  }
  return CSP_SOURCE.test(source) ? source : undefined
}

/**
 * Headers of every page this endpoint renders: no caching, no framing (clickjacking), no script
 * at all, and forms that may only post here and then be redirected to the client.
 */
function setPageHeaders(ctx: Context, redirectUri?: string): void {
  const formAction = ["'self'"]
  // Chromium applies form-action to the redirect that follows the form's POST.
  const target = redirectUri === undefined ? undefined : formActionSource(redirectUri)
  if (target !== undefined) formAction.push(target)
  ctx.set(
    'Content-Security-Policy',
    [
      "default-src 'none'",
      `style-src ${STYLE_HASH}`,
      `form-action ${formAction.join(' ')}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
  )
  ctx.set('X-Frame-Options', 'DENY')
  ctx.set('Cache-Control', 'no-store')
  ctx.set('Pragma', 'no-cache')
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.type = 'text/html; charset=utf-8'
}

function errorPage(ctx: Context, description: string): void {
  setPageHeaders(ctx)
  ctx.status = 400
  ctx.body = renderErrorPage(description)
}

async function showLogin(
  ctx: Context & { state: TenantState },
  request: AuthorizationRequest,
  deps: AuthorizeRouteDeps,
  status: number,
  extra: { message?: string; username?: string; retryAfterSeconds?: number } = {},
): Promise<void> {
  const { tenant } = ctx.state
  const form = await beginLogin(request, tenant.context, deps.grants)
  // A fresh value with every form: whatever cookie the browser sent is replaced, never adopted.
  ctx.cookies.set(BINDING_COOKIE, form.bindingValue, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/authorize',
    secure: ctx.secure,
    maxAge: deps.grants.loginTtlSeconds * 1000,
  })
  setPageHeaders(ctx, request.redirectUri)
  if (extra.retryAfterSeconds !== undefined) ctx.set('Retry-After', `${extra.retryAfterSeconds}`)
  ctx.status = status
  ctx.body = renderLoginPage({
    tenantName: tenant.tenant.name,
    clientName: request.client.name ?? request.client.clientId,
    csrfToken: form.csrfToken,
    ...extra,
  })
}

/**
 * GET /authorize: validates the request and shows the login page.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 */
export function authorizeRoute(deps: AuthorizeRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const outcome = parseAuthorizationRequest(
      new URLSearchParams(ctx.querystring),
      ctx.state.tenant.context,
    )
    switch (outcome.kind) {
      case 'error-page':
        return errorPage(ctx, outcome.description)
      case 'redirect':
        ctx.set('Cache-Control', 'no-store')
        ctx.status = 303
        ctx.redirect(outcome.location)
        return
      case 'login':
        return showLogin(ctx, outcome.request, deps, 200)
    }
  }
}

/**
 * POST /authorize: the login form's submission. Success is a 303 to the client's redirect_uri
 * with `code`, `state` and `iss` (RFC 9207).
 */
export function loginRoute(deps: AuthorizeRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const type = (ctx.get('Content-Type').split(';', 1)[0] ?? '').trim().toLowerCase()
    if (type !== 'application/x-www-form-urlencoded') {
      return errorPage(ctx, 'The sign-in form was not submitted as a form.')
    }
    const fields = new Map<string, string>()
    for (const [name, value] of new URLSearchParams(await readTextBody(ctx, deps.maxBodyBytes))) {
      if (fields.has(name)) return errorPage(ctx, `The sign-in form repeats the field ${name}.`)
      if (value !== '') fields.set(name, value)
    }
    const username = fields.get('username')
    const outcome = await completeLogin(
      {
        csrfToken: fields.get('csrf_token'),
        username,
        password: fields.get('password'),
        bindingValue: ctx.cookies.get(BINDING_COOKIE),
        address: ctx.ip,
      },
      ctx.state.tenant.context,
      deps.grants,
    )
    switch (outcome.kind) {
      case 'error-page':
        return errorPage(ctx, outcome.description)
      case 'redirect':
        ctx.set('Cache-Control', 'no-store')
        ctx.status = 303
        ctx.redirect(outcome.location)
        return
      case 'retry':
        return showLogin(
          ctx,
          outcome.request,
          deps,
          outcome.retryAfterSeconds === undefined ? 400 : 429,
          {
            message: outcome.message,
            ...(username === undefined ? {} : { username }),
            ...(outcome.retryAfterSeconds === undefined
              ? {}
              : { retryAfterSeconds: outcome.retryAfterSeconds }),
          },
        )
    }
  }
}
