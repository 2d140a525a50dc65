import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'

const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url))

/**
 * TLS termination in front of an issuer, as in production: https on 127.0.0.1 with the tests'
 * certificate for `localhost`, forwarded over http with X-Forwarded-Proto and X-Forwarded-For
 * (the issuer runs with TRUST_PROXY=1).
 */
export interface TlsProxy {
  /** `https://localhost:<port>` */
  url: string
  port: number
  /** The issuer (`http://127.0.0.1:<port>`) that gets the requests from now on. */
  forwardTo(target: string): void
  close(): Promise<void>
}

export async function startTlsProxy(): Promise<TlsProxy> {
  let target: URL | undefined
  const tls = {
    cert: readFileSync(`${TLS}localhost.crt`),
    key: readFileSync(`${TLS}localhost.key`),
  }
  const server = createServer(tls, (req, res) => {
    if (target === undefined) return void res.writeHead(502).end()
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          'x-forwarded-proto': 'https',
          'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1',
        },
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end()
      else res.destroy()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `https://localhost:${port}`,
    port,
    forwardTo(url) {
      target = new URL(url)
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
