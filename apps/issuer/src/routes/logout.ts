import { logout } from '@tessera/grants'
import type { GrantDeps } from '@tessera/grants'
import type { Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import { readBrowserCookie } from '../http/cookies.js'
import type { TenantState } from '../http/tenant.js'
import { renderLogoutErrorPage, renderSignedOutPage } from '../views/login.js'
import { setPageHeaders, setSessionCookie } from './authorize.js'

export interface LogoutRouteDeps {
  grants: GrantDeps
  maxBodyBytes: number
  secureCookies: boolean
}

/**
 * GET and POST /logout (OpenID Connect RP-Initiated Logout 1.0 §2): the parameters come in the
 * query (GET) or a form body (POST). A request that cannot be honoured is a 400 page and changes
 * nothing; otherwise the browser's session ends and it goes back to the client, or sees a page
 * saying it is signed out.
 */
export function logoutRoute(deps: LogoutRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    let query: URLSearchParams
    if (ctx.method === 'POST') {
      const type = (ctx.get('Content-Type').split(';', 1)[0] ?? '').trim().toLowerCase()
      if (type !== 'application/x-www-form-urlencoded') {
        setPageHeaders(ctx)
        ctx.status = 400
        ctx.body = renderLogoutErrorPage('The logout request was not sent as a form.')
        return
      }
      query = new URLSearchParams(await readTextBody(ctx, deps.maxBodyBytes))
    } else {
      query = new URLSearchParams(ctx.querystring)
    }
    const { tenant } = ctx.state
    const outcome = await logout(
      query,
      readBrowserCookie(ctx, 'tessera_session'),
      tenant.context,
      deps.grants,
    )
    if (outcome.kind === 'error-page') {
      setPageHeaders(ctx)
      ctx.status = 400
      ctx.body = renderLogoutErrorPage(outcome.description)
      return
    }
    if (outcome.clearSession) setSessionCookie(ctx, undefined, deps)
    if (outcome.kind === 'redirect') {
      ctx.set('Cache-Control', 'no-store')
      ctx.status = 303
      ctx.redirect(outcome.location)
      return
    }
    setPageHeaders(ctx)
    ctx.status = 200
    ctx.body = renderSignedOutPage(tenant.tenant.name)
  }
}
