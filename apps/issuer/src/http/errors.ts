import {
  ClientKeysUnavailableError,
  OAuthError,
  ProviderFailureError,
  ThrottleBusyError,
} from '@tessera/grants'
import { StoreError } from '@tessera/store'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import { logClientAuthFailure } from './client-auth-log.js'
import { HttpError } from './http-error.js'
import { OAUTH_STATUS } from './oauth-status.js'
import type { TenantState } from './tenant.js'

interface Rendered {
  status: number
  body: { error: string; error_description: string }
  headers: Record<string, string>
}

/** How long a client should wait after the database was unreachable: a failover's order. */
const STORE_RETRY_AFTER_SECONDS = 5
/**
 * How long a client should wait after a provider script did not answer in time: the service
 * behind it (a directory, a database) is slow or away, which a few seconds may cure.
 */
export const PROVIDER_RETRY_AFTER_SECONDS = 5

/**
 * Logs a provider script that failed: its file and the reason, never the credentials (the
 * reason has the password cut out). A timeout is a warning: the script may be fine and the
 * service behind it slow; anything else is a bug in the script, an error.
 */
export function logProviderFailure(
  ctx: Context,
  error: ProviderFailureError,
  logger: Logger,
): void {
  // Not `code`: the logger censors that name, an authorization code's.
  const fields = {
    failure: error.code,
    provider: error.provider,
    reason: error.reason,
    tenant: (ctx.state as Partial<TenantState>).tenant?.tenant.name,
    method: ctx.method,
    path: ctx.path,
  }
  if (error.code === 'ERR_PROVIDER_TIMEOUT') logger.warn(fields, 'provider timed out')
  else logger.error(fields, 'provider failed')
}

function render(error: unknown): Rendered | undefined {
  if (error instanceof OAuthError) {
    const headers: Record<string, string> = {}
    if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = `${error.retryAfterSeconds}`
    if (error.code === 'invalid_client' && error.challenge === 'Basic') {
      headers['WWW-Authenticate'] = 'Basic realm="tessera", charset="UTF-8"'
    }
    if (error.code === 'invalid_token' && error.challenge === 'Bearer') {
      // RFC 6750 §3: the description goes in a quoted string, without `"` or `\`.
      headers['WWW-Authenticate'] =
        `Bearer error="invalid_token", error_description="${error.description.replace(/["\\]/g, '')}"`
    }
    return {
      status: OAUTH_STATUS[error.code],
      body: { error: error.code, error_description: error.description },
      headers,
    }
  }
  if (error instanceof StoreError && error.code === 'ERR_STORE_UNAVAILABLE') {
    // The database is away, not the client at fault: RFC 6749's code for a server that cannot
    // answer now, with the status and Retry-After that tell clients and balancers to come back.
    return {
      status: 503,
      body: {
        error: 'temporarily_unavailable',
        error_description: 'the service is unavailable; retry later',
      },
      headers: { 'Retry-After': `${STORE_RETRY_AFTER_SECONDS}` },
    }
  }
  if (error instanceof ClientKeysUnavailableError) {
    // The client's jwks_uri has not given a usable key set yet: not the client's credentials at
    // fault, so not invalid_client; it may answer on the next fetch, after the cooldown.
    return {
      status: 503,
      body: {
        error: 'temporarily_unavailable',
        error_description: "the client's keys (jwks_uri) could not be fetched; retry later",
      },
      headers: { 'Retry-After': `${error.retryAfterSeconds}` },
    }
  }
  if (error instanceof ThrottleBusyError) {
    // Waited PROVIDER_TIMEOUT_MS for the checks ahead of it on a counter, without a decision.
    return {
      status: 503,
      body: {
        error: 'temporarily_unavailable',
        error_description: `sign-in attempts ${error.waitedFor === 'user' ? 'for this user' : 'from this address'} are still being checked; retry later`,
      },
      headers: { 'Retry-After': `${error.retryAfterSeconds}` },
    }
  }
  if (error instanceof ProviderFailureError) {
    // A timeout is RFC 6749's "cannot answer now"; anything else is the server's own fault.
    return error.code === 'ERR_PROVIDER_TIMEOUT'
      ? {
          status: 503,
          body: {
            error: 'temporarily_unavailable',
            error_description: 'the user directory did not answer in time; retry later',
          },
          headers: { 'Retry-After': `${PROVIDER_RETRY_AFTER_SECONDS}` },
        }
      : {
          status: 500,
          body: { error: 'server_error', error_description: 'internal error' },
          headers: {},
        }
  }
  if (error instanceof HttpError) {
    return {
      status: error.status,
      body: { error: error.code, error_description: error.description },
      headers: { ...error.headers },
    }
  }
  return undefined
}

/**
 * Answers `error` on `ctx`: a typed error as an RFC 6749 §5.2 body, anything unexpected as a
 * generic `server_error` whose detail stays in the log.
 */
export function respondWithError(ctx: Context, error: unknown, logger: Logger): void {
  let rendered = render(error)
  if (error instanceof OAuthError) {
    logClientAuthFailure(ctx, error, logger)
  } else if (error instanceof ProviderFailureError) {
    logProviderFailure(ctx, error, logger)
  } else if (error instanceof ClientKeysUnavailableError) {
    // The fetch failure itself was logged where it happened, with its reason.
    logger.warn(
      { client_id: error.clientId, method: ctx.method, path: ctx.path },
      'client keys unavailable',
    )
  } else if (error instanceof ThrottleBusyError) {
    logger.warn({ waited_for: error.waitedFor, path: ctx.path }, 'throttle wait ran out')
  } else if (rendered?.status === 503) {
    // Expected during an outage; the message names host and database, never credentials.
    logger.warn({ err: error, method: ctx.method, path: ctx.path }, 'database unavailable')
  } else if (rendered === undefined || rendered.status >= 500) {
    logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed')
  }
  if (rendered === undefined || (rendered.status >= 500 && rendered.status !== 503)) {
    rendered = {
      status: 500,
      body: { error: 'server_error', error_description: 'internal error' },
      headers: {},
    }
  }
  ctx.status = rendered.status
  ctx.set('Cache-Control', 'no-store')
  for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value)
  ctx.body = rendered.body
}

/** The error handling of `respondWithError` as a middleware, for everything after it. */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      respondWithError(ctx, error, logger)
    }
  }
}
