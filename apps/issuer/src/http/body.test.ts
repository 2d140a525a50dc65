import { randomBytes } from 'node:crypto'
import { PassThrough, Readable } from 'node:stream'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import type { Context } from 'koa'
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

const contextOf = (req: Readable): Context => ({ req }) as unknown as Context

async function read(chunks: Buffer[], headers?: Record<string, string>, limit = 16_384) {
  return readTextBody(contextOf(fakeRequest(chunks, headers)), limit)
}

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(HttpError)
  return error as HttpError
}

/** `buffer` in pieces of `size` bytes, as a network would deliver it. */
function split(buffer: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = []
  for (let at = 0; at < buffer.length; at += size) pieces.push(buffer.subarray(at, at + size))
  return pieces
}

describe('readTextBody', () => {
  it('reads UTF-8 text: byte order mark dropped, malformed and split sequences handled', async () => {
    const cases: [Buffer[], string][] = [
      [[Buffer.from('{"grant_type":"refresh_token"}')], '{"grant_type":"refresh_token"}'],
      [[Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"b"}')], '{"a":"b"}'],
      [[Buffer.from('\ufeff\ufeffx')], '\ufeffx'],
      [[Buffer.from('é∂🔑 grant_type=password', 'utf8')], 'é∂🔑 grant_type=password'],
      // A four-byte character split over three chunks.
      [[Buffer.from([0x61, 0xf0]), Buffer.from([0x9f, 0x94]), Buffer.from([0x91, 0x62])], 'a🔑b'],
      [[Buffer.from([0xc3])], '\ufffd'],
      [[Buffer.from([0x41, 0xff, 0x42])], 'A\ufffdB'],
      [[], ''],
      [[Buffer.alloc(0)], ''],
    ]
    for (const [chunks, text] of cases) expect(await read(chunks)).toBe(text)
  })

  it('refuses a declared length over the limit without reading, as 413', async () => {
    const req = fakeRequest([Buffer.from('x')], { 'content-length': '20000' })
    const error = await failure(readTextBody(contextOf(req), 16_384))
    expect(error).toMatchObject({
      status: 413,
      description: 'request body larger than 16384 bytes',
    })
    await new Promise((resolve) => setImmediate(resolve))
    // Nothing was taken from the stream: its one byte is still waiting there.
    expect(req.readableLength).toBe(1)
  })

  it('refuses a body that grows over the limit, as 413', async () => {
    const error = await failure(read([Buffer.alloc(10), Buffer.alloc(10)], {}, 15))
    expect(error.status).toBe(413)
  })

  it('accepts a body of exactly the limit', async () => {
    expect(await read([Buffer.alloc(15, 0x61)], { 'content-length': '15' }, 15)).toBe(
      'a'.repeat(15),
    )
  })

  it('refuses a body whose length differs from Content-Length, as 400', async () => {
    for (const declared of ['3', '12']) {
      const error = await failure(read([Buffer.from('12345')], { 'content-length': declared }))
      expect(error).toMatchObject({
        status: 400,
        description: 'request body length differs from Content-Length',
      })
    }
  })

  it('ignores a Content-Length that is not a number', async () => {
    expect(await read([Buffer.from('abc')], { 'content-length': 'many' })).toBe('abc')
  })

  it('answers a request that breaks off or fails with 400', async () => {
    for (const end of ['abort', 'error'] as const) {
      for (const headers of [{}, { 'content-encoding': 'gzip' }] as Record<string, string>[]) {
        const req = fakeRequest([gzipSync('{"a":"b"}').subarray(0, 8)], headers, end)
        const error = await failure(readTextBody(contextOf(req), 16_384))
        expect(error).toMatchObject({ status: 400, description: 'request body could not be read' })
      }
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

describe('readTextBody: Content-Encoding', () => {
  const text = `{"grant_type":"password","username":"é∂🔑","pad":"${'x'.repeat(3000)}"}`
  const encoded: Record<string, Buffer> = {
    gzip: gzipSync(text),
    'x-gzip': gzipSync(text),
    deflate: deflateSync(text),
    br: brotliCompressSync(text),
  }

  it.each(Object.keys(encoded))('decodes a %s body, whole or in small pieces', async (coding) => {
    const body = encoded[coding]!
    for (const size of [body.length, 7, 1]) {
      expect(await read(split(body, size), { 'content-encoding': coding })).toBe(text)
    }
  })

  it('reads the coding name case-insensitively, and identity as none', async () => {
    expect(await read([encoded.gzip!], { 'content-encoding': ' GZip ' })).toBe(text)
    expect(await read([Buffer.from('a=b')], { 'content-encoding': 'identity' })).toBe('a=b')
    expect(await read([Buffer.from('a=b')], { 'content-encoding': '' })).toBe('a=b')
  })

  it.each(['compress', 'zstd', 'gzip, br', 'br;q=1', 'identity, gzip', 'toString'])(
    'refuses Content-Encoding %j with 415 and Accept-Encoding',
    async (coding) => {
      const error = await failure(read([encoded.gzip!], { 'content-encoding': coding }))
      expect(error).toMatchObject({
        status: 415,
        code: 'invalid_request',
        description: 'unsupported Content-Encoding; send gzip, deflate, br or none',
        headers: { 'Accept-Encoding': 'gzip, deflate, br' },
      })
    },
  )

  it('applies the limit to the decoded size', async () => {
    // 3 kB of gzip that decode to more than the 3,100-byte limit.
    const body = gzipSync('a'.repeat(3101))
    expect(body.length).toBeLessThan(3100)
    const error = await failure(read([body], { 'content-encoding': 'gzip' }, 3100))
    expect(error).toMatchObject({ status: 413, description: 'request body larger than 3100 bytes' })
    expect(await read([gzipSync('a'.repeat(3100))], { 'content-encoding': 'gzip' }, 3100)).toBe(
      'a'.repeat(3100),
    )
  })

  it('stops a zip bomb after the limit: 1 GB of zeros in 1 MB of gzip, hardly read', async () => {
    // 64 gzip members of 16 MiB of zeros each: 1 GiB once decoded.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024))
    const members = 64
    const pieces = Array.from({ length: members }, () => split(member, 1024)).flat()
    let pulled = 0
    const req = Object.assign(
      new Readable({
        read() {
          const piece = pieces.shift()
          if (piece !== undefined) pulled += piece.length
          this.push(piece ?? null)
        },
      }),
      { headers: { 'content-encoding': 'gzip' } },
    )
    const started = Date.now()
    const error = await failure(readTextBody(contextOf(req), 16_384))
    expect(error.status).toBe(413)
    expect(member.length * members).toBeGreaterThan(1_000_000)
    // Of the 1 MB sent, no more was taken than what the pipe buffers on its way.
    expect(pulled).toBeLessThanOrEqual(64 * 1024)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('bounds the bytes received too: a gzip header comment that never ends is 413', async () => {
    // FLG.FCOMMENT set: the decoder reads a zero-terminated comment and outputs nothing.
    const header = Buffer.from([0x1f, 0x8b, 0x08, 0x10, 0, 0, 0, 0, 0, 0x03])
    const comment = split(Buffer.alloc(64 * 1024, 0x61), 1024)
    const error = await failure(read([header, ...comment], { 'content-encoding': 'gzip' }, 16_384))
    expect(error).toMatchObject({
      status: 413,
      description: 'request body larger than 16384 bytes',
    })
  })

  it('refuses a declared Content-Length over the limit of a compressed body without reading', async () => {
    const error = await failure(
      read([encoded.gzip!], { 'content-encoding': 'gzip', 'content-length': '20000' }),
    )
    expect(error.status).toBe(413)
  })

  it.each([
    ['gzip', Buffer.from('not gzip at all')],
    ['gzip', encoded.gzip!.subarray(0, encoded.gzip!.length - 6)],
    ['deflate', randomBytes(64)],
    ['br', Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ['br', encoded.br!.subarray(0, 20)],
  ])('answers malformed or truncated %s data with 400', async (coding, body) => {
    const error = await failure(read([body], { 'content-encoding': coding }))
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_request',
      description: 'request body could not be decoded',
    })
  })
})

describe('readTextBody: charset', () => {
  it.each([
    'application/x-www-form-urlencoded',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=utf8',
    'application/json;',
    'application/json; foo=bar',
  ])('reads a body sent as %j', async (type) => {
    expect(await read([Buffer.from('a=b')], { 'content-type': type })).toBe('a=b')
  })

  it.each([
    'application/x-www-form-urlencoded; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/json; charset="UTF-16LE"',
    'application/json; foo=bar; CHARSET = latin1',
    'application/json; charset=',
    'application/json; charset=utf-8; charset=windows-1252',
  ])('refuses %j with 415', async (type) => {
    const error = await failure(read([Buffer.from('a=b')], { 'content-type': type }))
    expect(error).toMatchObject({
      status: 415,
      code: 'invalid_request',
      description: 'unsupported charset; send UTF-8',
    })
  })
})
