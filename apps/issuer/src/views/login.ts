import { html, page } from './html.js'

export interface LoginPageView {
  tenantName: string
  clientName: string
  csrfToken: string
  /** Shown above the form, e.g. after wrong credentials. */
  message?: string
  /** Kept in the username field after a failed attempt. */
  username?: string
}

/** The login form: plain HTML that works without JavaScript. */
export function renderLoginPage(view: LoginPageView): string {
  const alert =
    view.message !== undefined && html`<p class="alert" role="alert">${view.message}</p>\n`
  return page(
    `Sign in · ${view.tenantName}`,
    html`<h1>Sign in</h1>
<p class="context">to continue to <strong>${view.clientName}</strong> at <strong>${view.tenantName}</strong></p>
${alert}<form method="post" action="/authorize">
<input type="hidden" name="csrf_token" value="${view.csrfToken}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${view.username ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  )
}

/** An error page for requests that must not be redirected back to the client. */
export function renderErrorPage(description: string): string {
  return page(
    'Sign-in error',
    html`<h1>Cannot sign in</h1>
<p class="alert" role="alert">${description}</p>
<p class="context">Return to the application you came from and try again.</p>`,
  )
}

/** The page for a sign-in that the user directory could not check in time (a 503). */
export function renderUnavailablePage(): string {
  return page(
    'Sign-in unavailable',
    html`<h1>Try again later</h1>
<p class="alert" role="alert">The sign-in service did not answer in time, so your password was not checked.</p>
<p class="context">Wait a moment, then return to the application you came from and sign in again.</p>`,
  )
}

/** The page after a logout that asked for no redirect. */
export function renderSignedOutPage(tenantName: string): string {
  return page(
    'Signed out',
    html`<h1>You are signed out</h1>
<p class="context">Your sign-in at <strong>${tenantName}</strong> has ended on this browser, and the applications it signed you in to can no longer refresh their access.</p>`,
  )
}

/** A logout request that cannot be honoured: nothing was changed. */
export function renderLogoutErrorPage(description: string): string {
  return page(
    'Sign-out error',
    html`<h1>Cannot sign out</h1>
<p class="alert" role="alert">${description}</p>
<p class="context">Nothing was changed. Return to the application you came from.</p>`,
  )
}
