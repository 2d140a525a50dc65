import {
  beginLogin,
  completeLogin,
  parseAuthorizationRequest,
  ProviderFailureError,
  resumeSession,
  sessionUserName,
} from '@tessera/grants'
import type {
  AuthorizationRequest,
  BeginLoginOptions,
  ConsentUser,
  GrantDeps,
  LoginOutcome,
  SessionCookie,
} from '@tessera/grants'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import { readTextBody } from '../http/body.js'
import { readBrowserCookie, writeBrowserCookie } from '../http/cookies.js'
import { logProviderFailure, PROVIDER_RETRY_AFTER_SECONDS } from '../http/errors.js'
import type { TenantState } from '../http/tenant.js'
import { STYLE_HASH } from '../views/html.js'
import { renderConsentPage } from '../views/consent.js'
import { renderContinuePage } from '../views/continue.js'
import { renderErrorPage, renderLoginPage, renderUnavailablePage } from '../views/login.js'

export interface AuthorizeRouteDeps {
  grants: GrantDeps
  maxBodyBytes: number
  logger: Logger
  /**
   * `start`: session and login-binding cookies are always `Secure`, also behind a proxy that
   * ends TLS without TRUST_PROXY telling the issuer so; `dev`: only on an https request.
   */
  secureCookies: boolean
}

/**
 * Sets the single sign-on session's cookie to `cookie`, or clears it (undefined); its
 * attributes and name are those of every browser cookie (`writeBrowserCookie`).
 */
export function setSessionCookie(
  ctx: Context,
  cookie: SessionCookie | undefined,
  deps: Pick<AuthorizeRouteDeps, 'secureCookies' | 'grants'>,
): void {
  const now = deps.grants.clock()
  writeBrowserCookie(ctx, 'tessera_session', {
    value: cookie?.value,
    maxAgeSeconds: cookie === undefined ? 0 : (cookie.expiresAt - now) / 1000,
    now,
    secureCookies: deps.secureCookies,
  })
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
export function setPageHeaders(ctx: Context, redirectUri?: string): void {
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

function errorPage(ctx: Context, description: string, status = 400): void {
  setPageHeaders(ctx)
  ctx.status = status
  ctx.body = renderErrorPage(description)
}

/**
 * A provider script that failed while the form was being checked: a browser gets a page, not
 * the JSON error of /token. Past PROVIDER_TIMEOUT_MS, a "try again later" page (503 with
 * Retry-After); a script that threw or answered garbage, an error page (500).
 */
function providerFailurePage(ctx: Context, error: ProviderFailureError, logger: Logger): void {
  logProviderFailure(ctx, error, logger)
  if (error.code === 'ERR_PROVIDER_TIMEOUT') {
    setPageHeaders(ctx)
    ctx.set('Retry-After', `${PROVIDER_RETRY_AFTER_SECONDS}`)
    ctx.status = 503
    ctx.body = renderUnavailablePage()
    return
  }
  errorPage(
    ctx,
    'Something went wrong while your sign-in was being checked. Return to the application and try again later.',
    500,
  )
}

/** Seals `request` into a form bound to a fresh binding cookie (as the login form is). */
async function sealForm(
  ctx: Context & { state: TenantState },
  request: AuthorizationRequest,
  deps: AuthorizeRouteDeps,
  options: BeginLoginOptions = {},
): Promise<string> {
  const form = await beginLogin(request, ctx.state.tenant.context, deps.grants, options)
  // A fresh value with every form: whatever cookie the browser sent is replaced, never adopted.
  writeBrowserCookie(ctx, 'tessera_login', {
    value: form.bindingValue,
    maxAgeSeconds: deps.grants.loginTtlSeconds,
    now: deps.grants.clock(),
    secureCookies: deps.secureCookies,
  })
  return form.csrfToken
}

/** "Continue as …": a live session's code for a loopback redirect URI waits for one click. */
async function showContinue(
  ctx: Context & { state: TenantState },
  confirm: { request: AuthorizationRequest; userName: string; sid: string },
  deps: AuthorizeRouteDeps,
): Promise<void> {
  const { request, userName, sid } = confirm
  const csrfToken = await sealForm(ctx, request, deps, { sid })
  setPageHeaders(ctx, request.redirectUri)
  ctx.status = 200
  ctx.body = renderContinuePage({
    tenantName: ctx.state.tenant.tenant.name,
    clientName: request.client.name ?? request.client.clientId,
    userName,
    csrfToken,
  })
}

/**
 * The consent page of a client the tenant file does not list: the signed-in user travels in the
 * form's seal, so only this browser, once, can answer it.
 */
async function showConsent(
  ctx: Context & { state: TenantState },
  consent: { request: AuthorizationRequest; user: ConsentUser },
  deps: AuthorizeRouteDeps,
): Promise<void> {
  const { request, user } = consent
  const { tenant, context } = ctx.state.tenant
  const csrfToken = await sealForm(ctx, request, deps, { user })
  const { dynamic } = request.client
  setPageHeaders(ctx, request.redirectUri)
  ctx.status = 200
  ctx.body = renderConsentPage({
    tenantName: tenant.name,
    clientName: request.client.name ?? request.client.clientId,
    ...(dynamic?.kind === 'metadata-document' ? { clientHost: dynamic.host } : {}),
    userName: sessionUserName(user),
    scopes: request.scope.split(' ').filter((scope) => scope !== ''),
    // Without a resource, the token is for the tenant's audience.
    resources: request.resources ?? [context.audience],
    csrfToken,
  })
}

async function showLogin(
  ctx: Context & { state: TenantState },
  request: AuthorizationRequest,
  deps: AuthorizeRouteDeps,
  status: number,
  extra: { message?: string; username?: string; retryAfterSeconds?: number } = {},
): Promise<void> {
  const hint = request.openid?.loginHint
  if (extra.username === undefined && hint !== undefined) extra = { ...extra, username: hint }
  const { tenant } = ctx.state
  const csrfToken = await sealForm(ctx, request, deps)
  setPageHeaders(ctx, request.redirectUri)
  if (extra.retryAfterSeconds !== undefined) ctx.set('Retry-After', `${extra.retryAfterSeconds}`)
  ctx.status = status
  ctx.body = renderLoginPage({
    tenantName: tenant.tenant.name,
    clientName: request.client.name ?? request.client.clientId,
    csrfToken,
    ...extra,
  })
}

function redirect(ctx: Context, location: string): void {
  ctx.set('Cache-Control', 'no-store')
  ctx.status = 303
  ctx.redirect(location)
}

/**
 * GET /authorize: validates the request and shows the login page; an OpenID Connect request
 * with a live single sign-on session gets its code at once (see `resumeSession`).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://openid.net/specs/openid-connect-core-1_0.html#AuthRequest
 */
export function authorizeRoute(deps: AuthorizeRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const { context } = ctx.state.tenant
    const outcome = await parseAuthorizationRequest(new URLSearchParams(ctx.querystring), context)
    switch (outcome.kind) {
      case 'error-page':
        return errorPage(ctx, outcome.description)
      case 'redirect':
        return redirect(ctx, outcome.location)
      case 'login': {
        if (outcome.request.openid === undefined) return showLogin(ctx, outcome.request, deps, 200)
        const resumed = await resumeSession(
          outcome.request,
          { cookie: readBrowserCookie(ctx, 'tessera_session'), address: ctx.ip },
          context,
          deps.grants,
        )
        if (resumed.clearSession) setSessionCookie(ctx, undefined, deps)
        if (resumed.kind === 'redirect') return redirect(ctx, resumed.location)
        if (resumed.kind === 'confirm') {
          return showContinue(ctx, resumed, deps)
        }
        if (resumed.kind === 'consent') return showConsent(ctx, resumed, deps)
        return showLogin(ctx, resumed.request, deps, 200)
      }
    }
  }
}

/**
 * POST /authorize: the login form's, "Continue as" page's and consent page's submission (which
 * of them, the sealed `csrf_token` says). Success is a 303 to the client's redirect_uri
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
    let outcome: LoginOutcome
    try {
      outcome = await completeLogin(
        {
          csrfToken: fields.get('csrf_token'),
          username,
          password: fields.get('password'),
          decision: fields.get('decision'),
          bindingValue: readBrowserCookie(ctx, 'tessera_login'),
          sessionValue: readBrowserCookie(ctx, 'tessera_session'),
          address: ctx.ip,
        },
        ctx.state.tenant.context,
        deps.grants,
      )
    } catch (error) {
      if (error instanceof ProviderFailureError) {
        return providerFailurePage(ctx, error, deps.logger)
      }
      throw error
    }
    switch (outcome.kind) {
      case 'error-page':
        return errorPage(ctx, outcome.description)
      case 'redirect':
        if (outcome.session !== undefined) setSessionCookie(ctx, outcome.session, deps)
        return redirect(ctx, outcome.location)
      case 'consent':
        if (outcome.session !== undefined) setSessionCookie(ctx, outcome.session, deps)
        return showConsent(ctx, outcome, deps)
      case 'retry':
        return showLogin(ctx, outcome.request, deps, outcome.status ?? 400, {
          message: outcome.message,
          ...(username === undefined ? {} : { username }),
          ...(outcome.retryAfterSeconds === undefined
            ? {}
            : { retryAfterSeconds: outcome.retryAfterSeconds }),
        })
    }
  }
}
