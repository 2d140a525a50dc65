import { createServer, request as httpRequest } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http'
import express from 'express'
import Koa from 'koa'
import type { Verifier } from '../../src/index.js'
import { bearer as koaBearer, requireScope as koaRequireScope } from '../../src/koa.js'
import type { KoaAuthState } from '../../src/koa.js'
import { bearer as expressBearer, requireScope as expressRequireScope } from '../../src/express.js'
import { verifyRequest } from '../../src/fetch.js'

// Big enough for the 1 MB attack token to reach the middleware instead of Node's 431.
const MAX_HEADER_SIZE = 2 * 1024 * 1024

/** A listening test server. */
export interface TestServer {
  url: string
  close(): Promise<void>
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestServer> {
  const server: Server = createServer({ maxHeaderSize: MAX_HEADER_SIZE }, handler)
  server.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

// Every app has the same two routes: GET /orders needs the `read` scope, GET /admin `admin`.
const SCOPES: Record<string, string> = { '/orders': 'read', '/admin': 'admin' }

/** The test routes in Koa. */
export function koaServer(verifier: Verifier, realm?: string): Promise<TestServer> {
  const app = new Koa<KoaAuthState>()
  const guards = Object.fromEntries(
    Object.entries(SCOPES).map(([path, scope]) => [path, koaRequireScope(scope)]),
  )
  app.use(async (ctx, next) => {
    if (SCOPES[ctx.path] === undefined) ctx.status = 404
    else await next()
  })
  app.use(koaBearer(verifier, realm === undefined ? {} : { realm }))
  app.use(async (ctx, next) => {
    await guards[ctx.path]!(ctx, next)
  })
  app.use((ctx) => {
    const { payload, scopes, jkt } = ctx.state.auth
    ctx.body = { sub: payload.sub, scopes, jkt }
  })
  const handler = app.callback()
  return listen((req, res) => {
    void handler(req, res)
  })
}

/** The test routes in Express. */
export function expressServer(verifier: Verifier, realm?: string): Promise<TestServer> {
  const app = express()
  const guard = expressBearer(verifier, realm === undefined ? {} : { realm })
  for (const [path, scope] of Object.entries(SCOPES)) {
    app.get(path, guard, expressRequireScope(scope), (req, res) => {
      res.json({ sub: req.auth?.payload.sub, scopes: req.auth?.scopes, jkt: req.auth?.jkt })
    })
  }
  return listen(app)
}

/** The test routes as a fetch handler behind node:http. */
export function fetchServer(verifier: Verifier, realm?: string): Promise<TestServer> {
  const handle = async (request: Request): Promise<Response> => {
    const scope = SCOPES[new URL(request.url).pathname]
    if (scope === undefined) return new Response(null, { status: 404 })
    const result = await verifyRequest(request, verifier, {
      scope,
      ...(realm === undefined ? {} : { realm }),
    })
    if (!result.ok) return result.response
    const { payload, scopes, jkt } = result.auth
    return Response.json({ sub: payload.sub, scopes, jkt })
  }
  return listen((req, res) => {
    const headers = new Headers()
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
    }
    const url = `http://${req.headers.host}${req.url}`
    void handle(new Request(url, { method: req.method, headers })).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers))
      res.end(Buffer.from(await response.arrayBuffer()))
    })
  })
}

/** A response as the tests compare it. */
export interface Received {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** Raw request headers; an array sends the header once per value. */
export type RawHeaders = Record<string, string | string[]>

/** A GET with raw headers (fetch would normalise or refuse some of them). */
export function get(url: string, headers: RawHeaders = {}): Promise<Received> {
  return send('GET', url, headers)
}

/** A request of any method with raw headers and no body; the query of `url` is sent. */
export function send(method: string, url: string, headers: RawHeaders = {}): Promise<Received> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        method,
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end()
  })
}
