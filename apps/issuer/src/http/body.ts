import type { IncomingMessage } from 'node:http'
import type { Context } from 'koa'
import { HttpError } from './http-error.js'

/**
 * Reads the request body as UTF-8 text, refusing more than `limit` bytes before buffering them
 * (a declared Content-Length over the limit is refused without reading at all).
 *
 * What raw-body did for this, without its per-request machinery (an async resource, an iconv
 * decoder, five listeners wrapped twice), which cost about 9 µs of a refresh request: the same
 * limits and errors, and the same text (a leading byte order mark dropped, malformed bytes as
 * U+FFFD); `body.test.ts` holds the two to the same answers.
 */
export function readTextBody(ctx: Context, limit: number): Promise<string> {
  const req: IncomingMessage = ctx.req
  const declared = req.headers['content-length']
  // As raw-body read its `length`: a value that is not a number is ignored.
  const length =
    declared === undefined || Number.isNaN(Number(declared)) ? null : Number.parseInt(declared, 10)
  if (length !== null && length > limit) return Promise.reject(tooLarge(limit))
  if (!req.readable) return Promise.reject(unreadable())
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const cleanup = (): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onError)
      req.off('close', onError)
    }
    const fail = (error: HttpError): void => {
      cleanup()
      // Read no further; Node discards the rest once the response is sent.
      req.unpipe()
      req.pause()
      reject(error)
    }
    function onData(chunk: Buffer): void {
      received += chunk.length
      if (received > limit) fail(tooLarge(limit))
      else chunks.push(chunk)
    }
    function onEnd(): void {
      cleanup()
      if (length !== null && received !== length) {
        reject(
          new HttpError(400, 'invalid_request', 'request body length differs from Content-Length'),
        )
        return
      }
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)
      const text = bytes.toString('utf8')
      // A UTF-8 byte order mark is not part of the text (raw-body's decoder dropped it too).
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
    }
    function onError(): void {
      fail(unreadable())
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onError)
    // Closed before its end (the client went away): raw-body would have waited forever.
    req.on('close', onError)
  })
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'invalid_request', `request body larger than ${limit} bytes`)
}

function unreadable(): HttpError {
  return new HttpError(400, 'invalid_request', 'request body could not be read')
}
