import type { Client } from '@tessera/config-schema'
import { findClient } from '../client-lookup.js'
import { OAuthError } from '../errors.js'
import type { GrantDeps, TenantContext } from '../context.js'
import { sha256Hex } from '../crypto.js'
import { MAX_STATE_LENGTH } from '../authorize.js'

/** What a logout request leads to; `clearSession`: the browser should forget its session cookie. */
export type LogoutOutcome =
  /** Nothing was changed: the request cannot be trusted or honoured. */
  | { kind: 'error-page'; description: string }
  /** Signed out; back to the client's registered post-logout URI. */
  | { kind: 'redirect'; location: string; clearSession: boolean }
  /** Signed out; no redirect was asked for: show a page that says so. */
  | { kind: 'signed-out'; clearSession: boolean }

const SESSION_VALUE = /^[\w-]{43}$/

function audiences(aud: unknown): string[] {
  if (typeof aud === 'string') return [aud]
  return Array.isArray(aud) ? aud.filter((value): value is string => typeof value === 'string') : []
}

/**
 * RP-Initiated Logout (GET or POST /logout): checks `id_token_hint`, `client_id` and
 * `post_logout_redirect_uri` first and changes nothing when any is wrong; then ends the
 * browser's session (its codes and every refresh-token family it started, on every replica),
 * and redirects to the registered URI with `state`, or answers a signed-out page.
 *
 * The hint may have expired (an RP logs out long after sign-in), so only its signature (a key
 * this tenant publishes) and its `iss` are checked. A post-logout URI needs the client, from the
 * hint or `client_id`, and must be one it registered, exactly: anything else would make this an
 * open redirector.
 *
 * @see https://openid.net/specs/openid-connect-rpinitiated-1_0.html
 */
export async function logout(
  query: Iterable<[string, string]>,
  sessionCookie: string | undefined,
  tenant: TenantContext,
  deps: Pick<GrantDeps, 'sessions' | 'clock'>,
): Promise<LogoutOutcome> {
  const params = new Map<string, string>()
  for (const [name, value] of query) {
    if (params.has(name)) {
      return {
        kind: 'error-page',
        description: `The logout request repeats the parameter ${name}.`,
      }
    }
    // As at /authorize: a parameter sent without a value is treated as omitted.
    if (value !== '') params.set(name, value)
  }
  const hint = params.get('id_token_hint')
  let hinted: string[] | undefined
  if (hint !== undefined) {
    const payload = await tenant.verifyIdTokenHint?.(hint)
    if (payload === undefined) {
      return {
        kind: 'error-page',
        description: 'The id_token_hint was not issued by this server.',
      }
    }
    hinted = audiences(payload.aud)
  }
  const clientId = params.get('client_id')
  if (clientId !== undefined && hinted !== undefined && !hinted.includes(clientId)) {
    return {
      kind: 'error-page',
      description: 'The client_id does not match the id_token_hint.',
    }
  }
  const named = clientId ?? (hinted?.length === 1 ? hinted[0] : undefined)
  let client: Client | undefined
  if (named !== undefined) {
    client = await findClient(tenant, named).catch((error: unknown) => {
      if (error instanceof OAuthError) return undefined
      throw error
    })
    if (client === undefined) {
      return { kind: 'error-page', description: 'The client is not known to this server.' }
    }
  }
  const state = params.get('state')
  if (state !== undefined && Array.from(state).length > MAX_STATE_LENGTH) {
    return {
      kind: 'error-page',
      description: `The state must be at most ${MAX_STATE_LENGTH} characters.`,
    }
  }
  const target = params.get('post_logout_redirect_uri')
  if (target !== undefined) {
    if (client === undefined) {
      return {
        kind: 'error-page',
        description: 'post_logout_redirect_uri needs id_token_hint or client_id.',
      }
    }
    if (!client.postLogoutRedirectUris.includes(target)) {
      return {
        kind: 'error-page',
        description: 'The post_logout_redirect_uri is not registered for this client.',
      }
    }
  }

  const clearSession = sessionCookie !== undefined
  if (sessionCookie !== undefined && SESSION_VALUE.test(sessionCookie)) {
    const session = await deps.sessions.findSession(tenant.name, sha256Hex(sessionCookie))
    if (session !== undefined && session.tenant === tenant.name) {
      await deps.sessions.endSession(tenant.name, session.sid, deps.clock())
    }
  }
  if (target === undefined) return { kind: 'signed-out', clearSession }
  const query2 = state === undefined ? '' : new URLSearchParams({ state }).toString()
  const location = query2 === '' ? target : `${target}${target.includes('?') ? '&' : '?'}${query2}`
  return { kind: 'redirect', location, clearSession }
}
