import express from 'express'
import Koa from 'koa'
import type { Verifier } from '../../src/index.js'
import {
  bearer as koaBearer,
  protectedResourceMetadata as koaMetadata,
  requireScope as koaRequireScope,
} from '../../src/koa.js'
import type { KoaAuthState } from '../../src/koa.js'
import {
  bearer as expressBearer,
  protectedResourceMetadata as expressMetadata,
  requireScope as expressRequireScope,
} from '../../src/express.js'
import { protectedResourceMetadataResponse, verifyRequest } from '../../src/fetch.js'
import { listen } from './servers.js'
import type { TestServer } from './servers.js'

// Each app serves the metadata, then guards everything else: /mcp needs `tools:call`; anything
// that reaches the end unanswered is the app's own 404 `{"app":"not found"}`, so a request the
// metadata middleware passes on is visible.

/** The metadata middleware in front of a guarded route, in Koa. */
export function koaMetadataServer(verifier: Verifier): Promise<TestServer> {
  const app = new Koa<KoaAuthState>()
  app.use(koaMetadata(verifier))
  app.use(async (ctx, next) => {
    if (ctx.path !== '/mcp') {
      ctx.status = 404
      ctx.body = { app: 'not found' }
    } else await next()
  })
  app.use(koaBearer(verifier))
  app.use(koaRequireScope('tools:call'))
  app.use((ctx) => {
    ctx.body = { sub: ctx.state.auth.payload.sub }
  })
  const handler = app.callback()
  return listen((req, res) => void handler(req, res))
}

/** The same in Express. */
export function expressMetadataServer(verifier: Verifier): Promise<TestServer> {
  const app = express()
  app.use(expressMetadata(verifier))
  app.all('/mcp', expressBearer(verifier), expressRequireScope('tools:call'), (req, res) => {
    res.json({ sub: req.auth?.payload.sub })
  })
  app.use((_req, res) => {
    res.status(404).json({ app: 'not found' })
  })
  return listen(app)
}

/** The same as a fetch handler behind node:http. */
export function fetchMetadataServer(verifier: Verifier): Promise<TestServer> {
  const handle = async (request: Request): Promise<Response> => {
    const metadata = protectedResourceMetadataResponse(verifier, request)
    if (metadata !== undefined) return metadata
    if (new URL(request.url).pathname !== '/mcp') {
      return Response.json({ app: 'not found' }, { status: 404 })
    }
    const result = await verifyRequest(request, verifier, { scope: 'tools:call' })
    if (!result.ok) return result.response
    return Response.json({ sub: result.auth.payload.sub })
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

export { send } from './servers.js'
export type { Received as Answer } from './servers.js'
