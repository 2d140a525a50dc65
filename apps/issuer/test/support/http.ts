import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import type { IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { fileURLToPath } from 'node:url'

/** The certificate of the tests' TLS servers (test/fixtures/tls), for https base URLs. */
const TEST_CA = fileURLToPath(new URL('../fixtures/tls/localhost.crt', import.meta.url))

export interface HttpResponse {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown
}

export interface HttpRequest {
  method?: string
  path: string
  host: string
  headers?: Record<string, string>
  body?: string | Buffer
}

/**
 * A plain HTTP/1.1 request over loopback with full control of Host and the raw body (fetch
 * would not let a test send a forged Host header or a lying Content-Length).
 */
export function send(baseUrl: string, req: HttpRequest): Promise<HttpResponse> {
  const url = new URL(baseUrl)
  // An https base URL is a TLS proxy of the tests, with the tests' own certificate.
  const tls = url.protocol === 'https:'
  const request = tls ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const r = request(
      {
        ...(tls ? { ca: readFileSync(TEST_CA) } : {}),
        host: url.hostname,
        port: url.port,
        method: req.method ?? 'GET',
        // A fresh connection per request: a request that lies about its Content-Length must
        // not leave a half-read socket behind for the next one.
        agent: false,
        path: req.path,
        headers: { host: req.host, ...req.headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
        res.on('error', reject)
      },
    )
    r.on('error', reject)
    r.end(req.body)
  })
}

/** POST /token with a form body built from `params`. */
export function postForm(
  baseUrl: string,
  host: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return send(baseUrl, {
    method: 'POST',
    path: '/token',
    host,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  })
}

/** POST /token with a JSON body. */
export function postJson(
  baseUrl: string,
  host: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return send(baseUrl, {
    method: 'POST',
    path: '/token',
    host,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** `Basic base64(urlencode(id):urlencode(secret))` per RFC 6749 §2.3.1. */
export function basicAuth(clientId: string, secret: string): string {
  const encode = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`
}
