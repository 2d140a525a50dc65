import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import inflate from 'inflation'
import type { Context } from 'koa'
import getRawBody from 'raw-body'
import { HttpError } from './http-error.js'

/** The content codings a body may have (RFC 9110 §8.4.1; `x-gzip` is gzip, §8.4.1.3). */
const CODINGS: Readonly<Record<string, 'identity' | 'gzip' | 'deflate' | 'br'>> = {
  identity: 'identity',
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  br: 'br',
}
const ACCEPTED_CODINGS = 'gzip, deflate, br'

/**
 * Reads the request body as UTF-8 text, as Koa's body parsers do (raw-body, with inflation for
 * `Content-Encoding`): `gzip`, `deflate` and `br` bodies are decoded, and `limit` bounds the
 * decoded size, so a small compressed body that inflates without end is refused after at most
 * `limit` bytes of it. It also bounds the bytes received (a gzip header can carry any number of
 * bytes that decode to nothing). A leading byte order mark is dropped, malformed UTF-8 becomes
 * U+FFFD.
 *
 * Answers, as an {@link HttpError}: 413 over the limit (a declared Content-Length over it is
 * refused without reading), 415 for another content coding (with `Accept-Encoding`, RFC 9110
 * §15.5.16) or a charset other than UTF-8, 400 for compressed data that does not decode, a
 * length that differs from Content-Length, or a client that went away.
 */
export function readTextBody(ctx: Context, limit: number): Promise<string> {
  const req: IncomingMessage = ctx.req
  checkCharset(req.headers['content-type'])
  const coding = contentCoding(req.headers['content-encoding'])
  const declared = req.headers['content-length']
  // A declared length is compared with what arrives only when nothing decodes in between.
  const length = declared === undefined || Number.isNaN(Number(declared)) ? null : Number(declared)
  if (length !== null && length > limit) return Promise.reject(tooLarge(limit))
  if (!req.readable) return Promise.reject(unreadable())

  // The decoder inflation pipes the request into (it returns the pipe's destination).
  let decoder: Duplex | undefined
  let decodingFailed = false
  if (coding !== 'identity') {
    // @types/inflation calls this option `gzip`; inflation itself reads `encoding`.
    decoder = inflate(req, { encoding: coding } as inflate.Options) as Duplex
    decoder.once('error', (error) => {
      decodingFailed = !(error instanceof HttpError)
    })
    let received = 0
    const count = (chunk: Buffer): void => {
      received += chunk.length
      if (received > limit) {
        req.off('data', count)
        stopReading(req, decoder, tooLarge(limit))
      }
    }
    req.on('data', count)
  }

  return new Promise((resolve, reject) => {
    let settled = false
    // raw-body stops listening when its stream closes without an end (a client that went away
    // mid-body), and a decoder, fed by a pipe, never learns that its source is gone.
    const onGone = (): void => {
      // Closed after its end: the decoder may still be flushing, and raw-body will answer.
      if (req.readableEnded || settled) return
      settled = true
      stopReading(req, decoder, unreadable())
      reject(unreadable())
    }
    req.once('close', onGone)
    req.once('error', onGone)
    getRawBody(
      decoder ?? req,
      { limit, length: decoder === undefined ? length : null, encoding: 'utf-8' },
      (error, text) => {
        req.off('close', onGone)
        req.off('error', onGone)
        if (settled) return
        settled = true
        if (!error) resolve(text)
        else if (decodingFailed) reject(undecodable())
        else reject(asHttpError(error, limit))
      },
    )
  })
}

/** Ends reading: the decoder (if any) fails with `error`, and nothing more is taken from `req`. */
function stopReading(req: IncomingMessage, decoder: Duplex | undefined, error: HttpError): void {
  if (decoder !== undefined) {
    req.unpipe(decoder)
    decoder.destroy(error)
  }
  req.pause()
}

function contentCoding(header: string | undefined): 'identity' | 'gzip' | 'deflate' | 'br' {
  const name = (header ?? '').trim().toLowerCase() || 'identity'
  const coding = Object.hasOwn(CODINGS, name) ? CODINGS[name] : undefined
  if (coding === undefined) {
    throw new HttpError(
      415,
      'invalid_request',
      `unsupported Content-Encoding; send ${ACCEPTED_CODINGS} or none`,
      { 'Accept-Encoding': ACCEPTED_CODINGS },
    )
  }
  return coding
}

/**
 * Bodies are read as UTF-8 only (RFC 6749 §B for forms; RFC 8259 §8.1 for JSON). The
 * parameters are scanned leniently on purpose: a Content-Type that a strict parser refuses
 * (`application/json;`) has always been accepted, and its charset must still be seen.
 */
function checkCharset(header: string | undefined): void {
  if (header === undefined) return
  for (const parameter of header.split(';').slice(1)) {
    const equals = parameter.indexOf('=')
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue
    const charset = parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase()
    if (charset !== 'utf-8' && charset !== 'utf8') {
      throw new HttpError(415, 'invalid_request', 'unsupported charset; send UTF-8')
    }
  }
}

/** What raw-body or a decoder failed with, as the answer to the client. */
function asHttpError(error: unknown, limit: number): HttpError {
  if (error instanceof HttpError) return error
  const { type } = error as { type?: string }
  if (type === 'entity.too.large') return tooLarge(limit)
  if (type === 'request.size.invalid') {
    return new HttpError(400, 'invalid_request', 'request body length differs from Content-Length')
  }
  return unreadable()
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'invalid_request', `request body larger than ${limit} bytes`)
}

function undecodable(): HttpError {
  return new HttpError(400, 'invalid_request', 'request body could not be decoded')
}

function unreadable(): HttpError {
  return new HttpError(400, 'invalid_request', 'request body could not be read')
}
