import type { OAuthError } from '@tessera/grants'
import type { Context } from 'koa'
import type { Logger } from 'pino'
import type { TenantState } from './tenant.js'

/** The longest client_id logged as it is; a longer one is cut, with `…` appended. */
export const LOGGED_CLIENT_ID_LENGTH = 128

/** Control, format and separator characters: what could forge or hide text in a log viewer. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

/** A client_id as sent, fit for a log line: unprintable characters as `?`, cut when long. */
export function loggableClientId(clientId: string): string {
  const points = [...clientId]
  const kept = points.slice(0, LOGGED_CLIENT_ID_LENGTH).join('').replace(UNPRINTABLE, '?')
  return points.length > LOGGED_CLIENT_ID_LENGTH ? `${kept}…` : kept
}

/**
 * Logs a failed client authentication at /token, /revoke or /introspect, one line: the
 * client_id as sent, the endpoint, the reason and the check that failed, the tenant and the
 * address. Never a secret or an assertion: the error carries neither. A failure is a warning;
 * a request refused unchecked by the throttle is debug, so that a flood of refused guesses
 * cannot flood the log (the failures that filled the count were logged).
 */
export function logClientAuthFailure(ctx: Context, error: OAuthError, logger: Logger): void {
  const failure = error.clientAuthFailure
  if (failure === undefined) return
  const fields = {
    client_id: failure.clientId === undefined ? undefined : loggableClientId(failure.clientId),
    endpoint: failure.endpoint,
    reason: failure.reason,
    detail: failure.detail,
    status: error.code === 'invalid_client' ? 401 : 429,
    tenant: (ctx.state as Partial<TenantState>).tenant?.tenant.name,
    address: ctx.ip,
  }
  if (failure.reason === 'throttled') logger.debug(fields, 'client authentication refused')
  else logger.warn(fields, 'client authentication failed')
}
