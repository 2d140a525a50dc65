import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { JWK } from 'jose'

/** How the local JWKS server answers. */
export type JwksMode =
  | 'ok'
  | 'error' // 500
  | 'refuse' // the connection is destroyed without an answer
  | 'hang' // headers never come
  | 'hang-body' // headers come, the body never ends
  | 'invalid-json'
  | 'oversized' // 100 KiB, declared in Content-Length
  | 'oversized-chunked' // 100 KiB without Content-Length
  | 'redirect' // 302 to another path that serves the keys
  | 'not-a-set' // valid JSON, not a JWK Set

export interface JwksServer {
  /** The JWKS URL. */
  url: string
  /** The issuer URL whose default JWKS location is `url`. */
  issuer: string
  /** The keys served in `ok` mode. */
  keys: JWK[]
  mode: JwksMode
  /** Requests to the JWKS path, counted when they arrive. */
  hits: number
  /** Requests to any other path (a redirect target, a `jku`, …). */
  otherHits: number
  /** Delay before answering, in ms. */
  delay: number
  close(): Promise<void>
}

/** A node:http JWKS server on 127.0.0.1 whose behaviour the test controls. */
export async function startJwksServer(keys: JWK[] = []): Promise<JwksServer> {
  const pending = new Set<ServerResponse>()
  const state: JwksServer = {
    url: '',
    issuer: '',
    keys,
    mode: 'ok',
    hits: 0,
    otherHits: 0,
    delay: 0,
    close: () => Promise.resolve(),
  }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== '/.well-known/jwks.json') {
      state.otherHits += 1
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ keys: state.keys }))
      return
    }
    state.hits += 1
    const answer = () => respond(state, req, res, pending)
    if (state.delay > 0) setTimeout(answer, state.delay)
    else answer()
  })
  server.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  state.issuer = `http://127.0.0.1:${address.port}`
  state.url = `${state.issuer}/.well-known/jwks.json`
  state.close = async () => {
    for (const res of pending) res.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return state
}

function respond(
  state: JwksServer,
  _req: IncomingMessage,
  res: ServerResponse,
  pending: Set<ServerResponse>,
): void {
  const json = { 'content-type': 'application/jwk-set+json' }
  switch (state.mode) {
    case 'ok':
      res.writeHead(200, json)
      res.end(JSON.stringify({ keys: state.keys }))
      return
    case 'error':
      res.writeHead(500, json)
      res.end('{"error":"boom"}')
      return
    case 'refuse':
      res.socket?.destroy()
      return
    case 'hang':
      pending.add(res)
      return
    case 'hang-body':
      pending.add(res)
      res.writeHead(200, json)
      res.write('{"keys":[')
      return
    case 'invalid-json':
      res.writeHead(200, json)
      res.end('{"keys": [ not json')
      return
    case 'oversized': {
      const body = JSON.stringify({ keys: state.keys, padding: 'x'.repeat(100 * 1024) })
      res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(body) })
      res.end(body)
      return
    }
    case 'oversized-chunked': {
      res.writeHead(200, json)
      res.write(`{"keys":${JSON.stringify(state.keys)},"padding":"`)
      for (let i = 0; i < 100; i += 1) res.write('x'.repeat(1024))
      res.end('"}')
      return
    }
    case 'redirect':
      res.writeHead(302, { location: '/elsewhere/jwks.json' })
      res.end()
      return
    case 'not-a-set':
      res.writeHead(200, json)
      res.end('[1, 2, 3]')
      return
  }
}
