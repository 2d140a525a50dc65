import { OAuthError } from '@tessera/grants'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import { HttpError } from './http-error.js'
import { OAUTH_STATUS } from './oauth-status.js'

interface Rendered {
  status: number
  body: { error: string; error_description: string }
  headers: Record<string, string>
}

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
  if (rendered === undefined || rendered.status >= 500) {
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
