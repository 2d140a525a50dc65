import { html, page } from './html.js'

/** The longest client or user name shown, in characters; a longer one is cut with "…". */
export const MAX_SHOWN_NAME_LENGTH = 80

/** The longest host, scope or resource shown, in characters. */
const MAX_SHOWN_VALUE_LENGTH = 200

export interface ConsentPageView {
  tenantName: string
  /** The client's `client_name`, else its `client_id`: chosen by whoever registered it. */
  clientName: string
  /** A client named by a metadata document URL: that URL's host (with a non-default port). */
  clientHost?: string
  /** The signed-in user, as their claims name them. */
  userName: string
  /** The scopes the client asks for. */
  scopes: readonly string[]
  /** The resources its tokens would be for (RFC 8707), or the tenant's audience. */
  resources: readonly string[]
  csrfToken: string
}

// Control and format characters (bidirectional overrides and isolates, zero-width joiners,
// line separators) let a name display as something else than it is, or break the layout.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

/**
 * A value a client chose, made fit to show: invisible and control characters removed, runs of
 * white space made one space, and cut to `max` characters with "…". HTML escaping is the
 * template's; this only keeps the text from misleading.
 */
export function shownText(value: string, max = MAX_SHOWN_NAME_LENGTH): string {
  const text = value.replace(/\s+/gu, ' ').replace(INVISIBLE, '').replace(/ {2,}/g, ' ').trim()
  // Only a string longer in UTF-16 units than the limit can be longer in characters.
  if (text.length <= max) return text
  const chars = Array.from(text)
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`
}

/**
 * The consent page for a client the tenant file does not list: who asks (its name in a `bdi`,
 * so its characters cannot reorder the sentence around it; for a metadata document client the
 * host that vouches for it), what for (one scope per line, the resources) and two buttons,
 * Allow and Deny. Plain HTML, no JavaScript.
 */
export function renderConsentPage(view: ConsentPageView): string {
  const clientName = shownText(view.clientName) || '(unnamed application)'
  const host =
    view.clientHost === undefined ? '' : shownText(view.clientHost, MAX_SHOWN_VALUE_LENGTH)
  const from = host !== '' && html` from <strong class="client-host"><bdi>${host}</bdi></strong>`
  const scopes =
    view.scopes.length === 0
      ? html`<li>no scopes: only that you signed in</li>`
      : view.scopes.map((scope) => html`<li>${shownText(scope, MAX_SHOWN_VALUE_LENGTH)}</li>\n`)
  const resources = view.resources.map(
    (resource) => html`<li>${shownText(resource, MAX_SHOWN_VALUE_LENGTH)}</li>\n`,
  )
  return page(
    `Allow access · ${view.tenantName}`,
    html`<h1>Allow <bdi class="client-name">${clientName}</bdi>?</h1>
<p class="context"><strong><bdi>${clientName}</bdi></strong>${from} asks to act for <strong><bdi>${shownText(view.userName)}</bdi></strong> at <strong>${view.tenantName}</strong>. ${view.tenantName} does not vouch for it.</p>
<p><strong>Scopes</strong></p>
<ul class="scopes">
${scopes}</ul>
<p><strong>${view.resources.length === 1 ? 'Resource' : 'Resources'}</strong></p>
<ul class="resources">
${resources}</ul>
<form method="post" action="/authorize">
<input type="hidden" name="csrf_token" value="${view.csrfToken}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p class="context">Did not start this sign-in? Choose Deny: nothing is shared unless you allow it.</p>`,
  )
}
