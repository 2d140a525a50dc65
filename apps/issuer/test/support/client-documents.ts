import { readFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { FIXTURES } from './issuer.js'

/**
 * A self-signed certificate for `localhost` and `127.0.0.1`, made for these tests alone (its key
 * is in the repository: it must never be trusted outside them). A spawned issuer trusts it
 * through NODE_EXTRA_CA_CERTS.
 */
export const TEST_CERT_FILE = join(FIXTURES, 'tls', 'localhost.crt')
const TEST_KEY_FILE = join(FIXTURES, 'tls', 'localhost.key')

type Route = (req: IncomingMessage, res: ServerResponse) => void

/** Client ID metadata documents served on 127.0.0.1, over https and over http. */
export interface DocumentServer {
  /** `https://localhost:<port>` */
  https: string
  /** `http://127.0.0.1:<port>` */
  http: string
  /** Requests per path, both servers together. */
  hits: Map<string, number>
  /** What each path answers; a function of the base URL the request came in on. */
  routes: Map<string, (base: string) => Route>
  close(): Promise<void>
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const hits = new Map<string, number>()
  const routes: DocumentServer['routes'] = new Map()
  const handler = (base: () => string) => (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/'
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const route = routes.get(path)
    if (route) route(base())(req, res)
    else res.writeHead(404).end()
  }
  const tls = { cert: readFileSync(TEST_CERT_FILE), key: readFileSync(TEST_KEY_FILE) }
  let httpsBase = ''
  let httpBase = ''
  const servers: Server[] = [
    createHttpsServer(
      tls,
      handler(() => httpsBase),
    ),
    createHttpServer(handler(() => httpBase)),
  ]
  const ports = await Promise.all(
    servers.map(async (server) => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      return (server.address() as AddressInfo).port
    }),
  )
  httpsBase = `https://localhost:${ports[0]}`
  httpBase = `http://127.0.0.1:${ports[1]}`
  return {
    https: httpsBase,
    http: httpBase,
    hits,
    routes,
    async close() {
      for (const server of servers) {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    },
  }
}

/** A route answering `body` as JSON. */
export function json(body: unknown, headers: Record<string, string> = {}): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers })
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  }
}
