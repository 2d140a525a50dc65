import type { AuthorizationRequest } from './authorize.js'
import { errorRedirect } from './authorize.js'
import type { GrantDeps, TenantContext } from './context.js'
import type { ConsentRecord } from './dynamic-ports.js'
import { issueCode } from './internal/issue-code.js'
import type { SealedUser } from './internal/login-seal.js'
import type { LoginOutcome, LoginSubmission } from './login-form.js'
import { findSession } from './openid/session.js'

/** How long a consent is remembered, in seconds: 30 days. */
export const CONSENT_TTL_SECONDS = 30 * 24 * 3600

/**
 * The signed-in user a consent page asks: who they are and, for OpenID Connect, the sign-in
 * (session) the code will carry. It travels sealed in the consent form, never in its fields.
 */
export type ConsentUser = SealedUser

/** A consent form's answer: which of its buttons was pressed. */
export const CONSENT_DECISIONS = ['allow', 'deny'] as const
export type ConsentDecision = (typeof CONSENT_DECISIONS)[number]

/** Whether a posted `decision` field is one of the consent form's buttons. */
export function isConsentDecision(value: string | undefined): value is ConsentDecision {
  return (CONSENT_DECISIONS as readonly (string | undefined)[]).includes(value)
}

/** A signed-in request's next step: its code, or the consent page first. */
export type SignedInOutcome =
  | { kind: 'code'; location: string }
  | { kind: 'consent'; request: AuthorizationRequest; user: ConsentUser }

function scopesOf(request: AuthorizationRequest): string[] {
  return request.scope.split(' ').filter((scope) => scope !== '')
}

/** The store's key for the resources of a request: sorted, space-separated; `''` for none. */
function resourcesKey(request: AuthorizationRequest): string {
  return [...(request.resources ?? [])].sort().join(' ')
}

function findLiveConsent(
  request: AuthorizationRequest,
  subject: string,
  tenant: TenantContext,
  deps: Pick<GrantDeps, 'consents' | 'clock'>,
): Promise<ConsentRecord | undefined> {
  const now = deps.clock()
  return deps.consents
    .findConsent(tenant.name, subject, request.client.clientId, resourcesKey(request), now)
    .then((consent) => (consent !== undefined && consent.expiresAt > now ? consent : undefined))
}

/**
 * Whether `subject` must be asked before `request`'s client gets a code: never for a client
 * the tenant file lists (it is trusted); for any other, when `prompt` held `consent`, or no
 * live consent of this user to this client for these resources holds every requested scope.
 * A consent to more scopes covers a request for fewer.
 */
export async function needsConsent(
  request: AuthorizationRequest,
  subject: string,
  tenant: TenantContext,
  deps: Pick<GrantDeps, 'consents' | 'clock'>,
): Promise<boolean> {
  if (request.client.dynamic === undefined) return false
  if (request.promptConsent === true) return true
  const consent = await findLiveConsent(request, subject, tenant, deps)
  if (consent === undefined) return true
  const granted = new Set(consent.scopes)
  return !scopesOf(request).every((scope) => granted.has(scope))
}

/**
 * The code for a signed-in user, unless the client is one the user must consent to first (see
 * {@link needsConsent}): then the consent page, which alone can lead to the code.
 */
export async function issueCodeOrAskConsent(
  request: AuthorizationRequest,
  user: ConsentUser,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<SignedInOutcome> {
  if (await needsConsent(request, user.sub, tenant, deps)) {
    return { kind: 'consent', request, user }
  }
  const location = await issueCode(
    request,
    { sub: user.sub, claims: user.claims },
    user.signIn,
    tenant,
    deps,
  )
  return { kind: 'code', location }
}

/**
 * Remembers the user's consent for 30 days. The scopes of a live consent to the same client and
 * resources are kept as well, so consenting to a second scope does not forget the first.
 */
async function rememberConsent(
  request: AuthorizationRequest,
  subject: string,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<void> {
  const earlier = await findLiveConsent(request, subject, tenant, deps)
  const scopes = new Set([...(earlier?.scopes ?? []), ...scopesOf(request)])
  await deps.consents.saveConsent({
    tenant: tenant.name,
    subject,
    clientId: request.client.clientId,
    resources: resourcesKey(request),
    scopes: [...scopes].sort(),
    expiresAt: deps.clock() + CONSENT_TTL_SECONDS * 1000,
  })
}

/**
 * The consent form's answer, once its seal, browser binding and single use were checked (by
 * `completeLogin`). Allow: the consent is remembered and the code issued, if the sign-in it
 * names is still the browser's (an OpenID Connect sign-in: the user may have signed out or
 * another user signed in meanwhile; then the login form). Deny: `access_denied` at the
 * redirect URI, with `state` and `iss`, and nothing remembered.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2.1
 */
export async function completeConsent(
  request: AuthorizationRequest,
  user: ConsentUser,
  decision: ConsentDecision,
  form: Pick<LoginSubmission, 'sessionValue' | 'address'>,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<LoginOutcome> {
  if (decision === 'deny') {
    const denied = errorRedirect(
      request.redirectUri,
      request.state,
      tenant.issuer,
      'access_denied',
      'the user denied the request',
    )
    if (denied.kind !== 'redirect') throw new Error('unreachable: errorRedirect redirects')
    return { kind: 'redirect', location: denied.location }
  }
  if (user.signIn !== undefined) {
    const { session } = await findSession(form.sessionValue, form.address, tenant, deps)
    if (session === undefined || session.sid !== user.signIn.sid || session.sub !== user.sub) {
      return { kind: 'retry', request, message: 'Your sign-in has ended. Sign in again.' }
    }
  }
  await rememberConsent(request, user.sub, tenant, deps)
  const location = await issueCode(
    request,
    { sub: user.sub, claims: user.claims },
    user.signIn,
    tenant,
    deps,
  )
  return { kind: 'redirect', location }
}
