import { OAuthError } from '@tessera/grants'
import { StoreError } from '@tessera/store'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import { HttpError } from './http-error.js'
import { OAUTH_STATUS } from './oauth-status.js'

interface Rendered {
  status: number
  body: { error: string; error_description: string }
  headers: Record<string, string>
}

/** How long a client should wait after the database was unreachable: a failover's order. */
const STORE_RETRY_AFTER_SECONDS = 5

function render(error: unknown): Rendered | undefined {
  if (error instanceof OAuthError) {
    const headers: Record<string, string> = {}
    if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = `${error.retryAfterSeconds}`
    if (error.code === 'invalid_client' && error.challenge === 'Basic') {
      headers['WWW-Authenticate'] = 'Basic realm="tessera", charset="UTF-8"'
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
  if (rendered?.status === 503) {
    // Expected during an outage; the message names host and database, never credentials.
    logger.warn({ err: error, method: ctx.method, path: ctx.path }, 'database unavailable')
  } else if (rendered === undefined || rendered.status >= 500) {
    logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed')
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
