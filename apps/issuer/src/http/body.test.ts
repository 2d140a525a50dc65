import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import type { Context } from 'koa'
import getRawBody from 'raw-body'
import { describe, expect, it } from 'vitest'
import { readTextBody } from './body.js'
import { HttpError } from './http-error.js'

/** A request stream that sends `chunks`, then ends (or, with `abort`, is destroyed instead). */
function fakeRequest(
  chunks: Buffer[],
  headers: Record<string, string> = {},
  end: 'end' | 'abort' | 'error' = 'end',
): PassThrough & { headers: Record<string, string> } {
  const stream = Object.assign(new PassThrough(), { headers })
  setImmediate(() => {
    for (const chunk of chunks) stream.write(chunk)
    if (end === 'end') stream.end()
    else if (end === 'abort') stream.destroy()
    else stream.destroy(new Error('connection reset'))
  })
  return stream
}

const contextOf = (req: PassThrough): Context => ({ req }) as unknown as Context

async function ours(chunks: Buffer[], headers?: Record<string, string>, limit = 16_384) {
  return readTextBody(contextOf(fakeRequest(chunks, headers)), limit)
}

/** What raw-body answered for the same bytes, as the issuer called it. */
async function rawBody(chunks: Buffer[], headers: Record<string, string> = {}, limit = 16_384) {
  return getRawBody(fakeRequest(chunks, headers), {
    length: headers['content-length'],
    limit,
    encoding: 'utf-8',
  })
}

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(HttpError)
  return error as HttpError
}

describe('readTextBody', () => {
  it('reads the text raw-body read, byte order mark, malformed and split sequences included', async () => {
    const cases: Buffer[][] = [
      [Buffer.from('{"grant_type":"refresh_token"}')],
      [Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"b"}')],
      [Buffer.from('\ufeff\ufeffx')],
      [Buffer.from('é∂🔑 grant_type=password', 'utf8')],
      // A four-byte character split over three chunks.
      [Buffer.from([0x61, 0xf0]), Buffer.from([0x9f, 0x94]), Buffer.from([0x91, 0x62])],
      [Buffer.from([0xc3])],
      [Buffer.from([0xff, 0xfe, 0x41, 0xed, 0xa0, 0x80, 0xe2, 0x82])],
      [],
      [Buffer.alloc(0)],
    ]
    for (let i = 0; i < 50; i++) cases.push([randomBytes(40), randomBytes(3), randomBytes(100)])
    for (const chunks of cases) {
      expect(await ours(chunks)).toBe(await rawBody(chunks))
    }
  })

  it('refuses a declared length over the limit without reading, as 413', async () => {
    const error = await failure(ours([Buffer.from('x')], { 'content-length': '20000' }))
    expect(error).toMatchObject({
      status: 413,
      description: 'request body larger than 16384 bytes',
    })
  })

  it('refuses a body that grows over the limit, as 413', async () => {
    const error = await failure(ours([Buffer.alloc(10), Buffer.alloc(10)], {}, 15))
    expect(error.status).toBe(413)
    await expect(rawBody([Buffer.alloc(10), Buffer.alloc(10)], {}, 15)).rejects.toMatchObject({
      type: 'entity.too.large',
    })
  })

  it('accepts a body of exactly the limit', async () => {
    expect(await ours([Buffer.alloc(15, 0x61)], { 'content-length': '15' }, 15)).toBe(
      'a'.repeat(15),
    )
  })

  it('refuses a body whose length differs from Content-Length, as 400', async () => {
    for (const declared of ['3', '12']) {
      const error = await failure(ours([Buffer.from('12345')], { 'content-length': declared }))
      expect(error).toMatchObject({
        status: 400,
        description: 'request body length differs from Content-Length',
      })
    }
  })

  it('ignores a Content-Length that is not a number, as raw-body did', async () => {
    expect(await ours([Buffer.from('abc')], { 'content-length': 'many' })).toBe('abc')
    expect(await rawBody([Buffer.from('abc')], { 'content-length': 'many' })).toBe('abc')
  })

  it('answers a request that breaks off or fails with 400', async () => {
    for (const end of ['abort', 'error'] as const) {
      const req = fakeRequest([Buffer.from('{"a"')], {}, end)
      const error = await failure(readTextBody(contextOf(req), 16_384))
      expect(error).toMatchObject({ status: 400, description: 'request body could not be read' })
    }
  })

  it('answers a body that was already read with 400', async () => {
    const req = fakeRequest([Buffer.from('x')])
    req.resume()
    await new Promise((resolve) => req.once('end', resolve))
    const error = await failure(readTextBody(contextOf(req), 16_384))
    expect(error.status).toBe(400)
  })
})
