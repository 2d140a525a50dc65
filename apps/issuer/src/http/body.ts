import type { Context } from 'koa'
import getRawBody from 'raw-body'
import { HttpError } from './http-error.js'

/**
 * Reads the request body as UTF-8 text, refusing more than `limit` bytes before buffering them
 * (a declared Content-Length over the limit is refused without reading at all).
 */
export async function readTextBody(ctx: Context, limit: number): Promise<string> {
  try {
    return await getRawBody(ctx.req, {
      length: ctx.request.headers['content-length'],
      limit,
      encoding: 'utf-8',
    })
  } catch (error) {
    const type = (error as { type?: unknown }).type
    if (type === 'entity.too.large') {
      throw new HttpError(413, 'invalid_request', `request body larger than ${limit} bytes`)
    }
    if (type === 'request.size.invalid') {
      throw new HttpError(400, 'invalid_request', 'request body length differs from Content-Length')
    }
    throw new HttpError(400, 'invalid_request', 'request body could not be read')
  }
}
