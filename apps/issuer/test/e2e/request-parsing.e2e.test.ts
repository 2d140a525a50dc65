import { request as httpRequest } from 'node:http'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { basicAuth, send } from '../support/http.js'
import type { HttpRequest, HttpResponse } from '../support/http.js'
import { HS, startIssuer, useIssuer } from '../support/issuer.js'
import { authorizePath, pkce, SPA } from '../support/oauth.js'

// Bodies are read by a maintained reader that decodes gzip, deflate and br,
// applies MAX_BODY_BYTES to the decoded size, and refuses other codings and charsets; a JSON
// body with a repeated name is refused like a repeated form field.
describe('request bodies over HTTP', () => {
  const issuer = useIssuer({ vars: { MAX_BODY_BYTES: '4096' } })

  const grant = {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_id: HS.client,
    client_secret: HS.secret,
  }
  const FORM = 'application/x-www-form-urlencoded'

  function token(body: Buffer | string, headers: Record<string, string>) {
    return send(issuer.url, { method: 'POST', path: '/token', host: HS.host, headers, body })
  }

  /** POST /token with a chunked body sent in pieces: no Content-Length to refuse it by. */
  function tokenChunked(body: Buffer, headers: Record<string, string>): Promise<HttpResponse> {
    const url = new URL(issuer.url)
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/token',
          agent: false,
          headers: { host: HS.host, 'transfer-encoding': 'chunked', ...headers },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              json: JSON.parse(text),
            })
            req.destroy()
          })
        },
      )
      // The server answers, and may close, before the whole body is sent.
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error)
      })
      for (let at = 0; at < body.length && !req.destroyed; at += 16_384) {
        req.write(body.subarray(at, at + 16_384))
      }
      req.end()
    })
  }

  const expectError = (res: HttpResponse, status: number, description: string): void => {
    expect(res.status).toBe(status)
    expect(res.json).toEqual({ error: 'invalid_request', error_description: description })
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  }

  it.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('decodes a %s body, form or JSON', async (coding, encode) => {
    const form = await token(encode(new URLSearchParams(grant).toString()), {
      'content-type': FORM,
      'content-encoding': coding,
    })
    expect(form.status).toBe(200)
    expect(form.json).toHaveProperty('access_token')
    const json = await tokenChunked(encode(JSON.stringify(grant)), {
      'content-type': 'application/json; charset=UTF-8',
      'content-encoding': coding,
    })
    expect(json.status).toBe(200)
  })

  it('decodes the bodies of /revoke and /introspect too', async () => {
    const body = gzipSync(new URLSearchParams({ token: 'not-a-token' }).toString())
    for (const path of ['/revoke', '/introspect']) {
      const res = await send(issuer.url, {
        method: 'POST',
        path,
        host: HS.host,
        headers: {
          'content-type': FORM,
          'content-encoding': 'gzip',
          authorization: basicAuth(HS.client, HS.secret),
        },
        body,
      })
      expect(res.status, path).toBe(200)
    }
  })

  it('refuses another Content-Encoding with 415, a JSON error and Accept-Encoding', async () => {
    for (const coding of ['compress', 'zstd', 'gzip, gzip', 'aes128gcm']) {
      const res = await token(gzipSync(JSON.stringify(grant)), {
        'content-type': 'application/json',
        'content-encoding': coding,
      })
      expectError(res, 415, 'unsupported Content-Encoding; send gzip, deflate, br or none')
      expect(res.headers['accept-encoding']).toBe('gzip, deflate, br')
    }
  })

  it('refuses a charset other than UTF-8 with 415', async () => {
    for (const type of [`${FORM}; charset=iso-8859-1`, 'application/json; charset=utf-16le']) {
      expectError(
        await token(new URLSearchParams(grant).toString(), { 'content-type': type }),
        415,
        'unsupported charset; send UTF-8',
      )
    }
  })

  it('answers a 1 MB zip bomb with 413 at once, and keeps serving', async () => {
    // 64 gzip members of 16 MiB of zeros: about 1 MB on the wire, 1 GiB decoded.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024))
    const bomb = Buffer.concat(Array.from({ length: 64 }, () => member))
    expect(bomb.length).toBeGreaterThan(1_000_000)
    const started = Date.now()
    const res = await tokenChunked(bomb, { 'content-type': FORM, 'content-encoding': 'gzip' })
    expectError(res, 413, 'request body larger than 4096 bytes')
    expect(Date.now() - started).toBeLessThan(2000)
    // Declared outright, it is refused before anything is read.
    expectError(
      await token(bomb, { 'content-type': FORM, 'content-encoding': 'gzip' }),
      413,
      'request body larger than 4096 bytes',
    )
    const ok = await token(new URLSearchParams(grant).toString(), { 'content-type': FORM })
    expect(ok.status).toBe(200)
  })

  it('applies MAX_BODY_BYTES to the decoded size', async () => {
    const padded = new URLSearchParams({ ...grant, scope: `read${' '.repeat(5000)}` }).toString()
    const compressed = gzipSync(padded)
    expect(compressed.length).toBeLessThan(4096)
    expectError(
      await token(compressed, { 'content-type': FORM, 'content-encoding': 'gzip' }),
      413,
      'request body larger than 4096 bytes',
    )
  })

  it('answers malformed or truncated compressed data with 400', async () => {
    const whole = gzipSync(JSON.stringify(grant))
    for (const [coding, body] of [
      ['gzip', Buffer.from('grant_type=password')],
      ['gzip', whole.subarray(0, whole.length - 4)],
      ['br', Buffer.from('grant_type=password')],
      ['deflate', Buffer.from('x\u0001garbage')],
    ] as const) {
      expectError(
        await token(body, { 'content-type': FORM, 'content-encoding': coding }),
        400,
        'request body could not be decoded',
      )
    }
  })

  it('refuses a JSON body with a repeated name, escaped or not', async () => {
    const cases = [
      ['{"grant_type":"password","grant_type":"client_credentials"}', 'grant_type'],
      [
        '{"grant_type":"password","username":"alice","password":"x","\\u0070assword":"alice-password"}',
        'password',
      ],
    ]
    for (const [body, name] of cases) {
      expectError(
        await token(body!, { 'content-type': 'application/json' }),
        400,
        `parameter "${name}" is repeated`,
      )
    }
  })
})

// Browsers must not guess a type other than the declared one.
describe('X-Content-Type-Options on the tenants’ port', () => {
  it('is nosniff on every response: pages, JSON, errors, 404s, 405s, HEAD', async () => {
    const issuer = await startIssuer({ databaseUrl: 'memory:' })
    try {
      const { challenge } = pkce()
      const page = authorizePath({
        response_type: 'code',
        client_id: SPA.clientId,
        redirect_uri: SPA.redirectUri,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })
      const requests: HttpRequest[] = [
        { path: page, host: HS.host },
        { path: '/authorize?client_id=nobody', host: HS.host },
        { path: '/.well-known/jwks.json', host: HS.host },
        { path: '/.well-known/oauth-authorization-server', host: HS.host, method: 'HEAD' },
        { path: '/healthz', host: 'any.test' },
        { path: '/readyz', host: 'any.test' },
        { path: '/metrics', host: HS.host },
        { path: '/nothing', host: HS.host },
        { path: '/token', host: 'unknown.test' },
        { path: '/token', host: HS.host },
        {
          path: '/token',
          host: HS.host,
          method: 'POST',
          body: '{',
          headers: { 'content-type': 'application/json' },
        },
        {
          path: '/token',
          host: HS.host,
          method: 'POST',
          body: 'x',
          headers: { 'content-encoding': 'zstd' },
        },
      ]
      const statuses = new Set<number>()
      for (const request of requests) {
        const res = await send(issuer.url, request)
        statuses.add(res.status)
        expect(
          res.headers['x-content-type-options'],
          `${request.method ?? 'GET'} ${request.path}`,
        ).toBe('nosniff')
      }
      expect([...statuses].sort()).toEqual([200, 400, 404, 405, 415])
    } finally {
      await issuer.close()
    }
  })
})
