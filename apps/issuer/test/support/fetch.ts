import { request as httpRequest } from 'node:http'

/**
 * A fetch for OAuth client libraries that sends every request to the issuer under test on
 * loopback, keeping the URL's host as the Host header: the tenants' host names (hs.test, …)
 * need no DNS, and undici's fetch would not let a Host header through.
 */
export function loopbackFetch(
  baseUrl: string,
): (url: string, init: RequestInit) => Promise<Response> {
  const target = new URL(baseUrl)
  return (url, init) => {
    const parsed = new URL(url)
    const headers: Record<string, string> = { host: parsed.host }
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value
    })
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: init.method ?? 'GET',
          path: parsed.pathname + parsed.search,
          headers,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const responseHeaders = new Headers()
            for (const [name, value] of Object.entries(res.headers)) {
              if (typeof value === 'string') responseHeaders.set(name, value)
              else if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v)
            }
            const status = res.statusCode ?? 500
            const body = status === 204 || status === 304 ? null : Buffer.concat(chunks)
            resolve(new Response(body, { status, headers: responseHeaders }))
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      const body = init.body
      if (body === undefined || body === null) req.end()
      else if (typeof body === 'string' || body instanceof URLSearchParams) req.end(body.toString())
      else reject(new TypeError('loopbackFetch: unsupported body type'))
    })
  }
}
