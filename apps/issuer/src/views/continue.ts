import { html, page } from './html.js'

export interface ContinuePageView {
  tenantName: string
  clientName: string
  /** The signed-in user, as the session names them. */
  userName: string
  csrfToken: string
}

/**
 * The one-click confirmation for a signed-in user whose sign-in would go to a loopback redirect
 * URI, where any program on the device may be listening: plain HTML, no JavaScript.
 */
export function renderContinuePage(view: ContinuePageView): string {
  return page(
    `Continue · ${view.tenantName}`,
    html`<h1>Continue as ${view.userName}</h1>
<p class="context">to <strong>${view.clientName}</strong> at <strong>${view.tenantName}</strong>, an application on this device</p>
<form method="post" action="/authorize">
<input type="hidden" name="csrf_token" value="${view.csrfToken}">
<button type="submit">Continue as ${view.userName}</button>
</form>
<p class="context">Did not start this sign-in? Close this page: nothing is shared until you continue.</p>`,
  )
}
