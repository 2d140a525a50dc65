import type { LookupAddress } from 'node:dns'
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardedFetch } from './fetch-guard.js'
import type { GuardedFetchOptions } from './fetch-guard.js'

const tls = (name: string) =>
  readFileSync(new URL(`../../test/fixtures/tls/${name}`, import.meta.url), 'utf8')
const CERT = tls('localhost.crt')
const WRONG_CERT = tls('wrong-name.crt')

type Route = (req: IncomingMessage, res: ServerResponse) => void

const json = (body: unknown, headers: Record<string, string> = {}): Route => {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
}

const ROUTES: Record<string, Route> = {
  '/doc': json({ hello: 'world' }),
  '/host': (req, res) => json({ host: req.headers.host })(req, res),
  '/redirect': (_req, res) => res.writeHead(302, { location: '/doc' }).end(),
  '/missing': (_req, res) => res.writeHead(404).end(),
  '/big': json({ padding: 'x'.repeat(6 * 1024) }),
  '/big-chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    // No Content-Length: the size shows only while reading.
    for (let i = 0; i < 6; i++) res.write('x'.repeat(1024))
    res.end()
  },
  '/slow': () => undefined,
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

describe('guardedFetch', () => {
  const hits: string[] = []
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    hits.push(req.url ?? '')
    const route = ROUTES[req.url ?? '']
    if (route) route(req, res)
    else res.writeHead(404).end()
  }
  const https = createHttpsServer({ cert: CERT, key: tls('localhost.key') }, handler)
  const wrongName = createHttpsServer({ cert: WRONG_CERT, key: tls('wrong-name.key') }, handler)
  const http = createHttpServer(handler)
  let port = 0
  let wrongPort = 0
  let httpPort = 0

  beforeAll(async () => {
    ;[port, wrongPort, httpPort] = await Promise.all([
      listen(https),
      listen(wrongName),
      listen(http),
    ])
  })
  afterAll(async () => {
    for (const server of [https, wrongName, http]) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  const options = (changes: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions => ({
    allowPrivateAddresses: true,
    timeoutMs: 2000,
    maxBytes: 5 * 1024,
    accept: 'application/json',
    ca: [CERT],
    ...changes,
  })
  const body = async (url: string, changes?: Partial<GuardedFetchOptions>) =>
    JSON.parse((await guardedFetch(url, options(changes))).body.toString()) as unknown

  it('fetches over https, checking the certificate against the host name', async () => {
    expect(await body(`https://127.0.0.1:${port}/doc`)).toEqual({ hello: 'world' })
    expect(await body(`https://localhost:${port}/doc`)).toEqual({ hello: 'world' })
    await expect(
      guardedFetch(`https://127.0.0.1:${wrongPort}/doc`, options({ ca: [WRONG_CERT] })),
    ).rejects.toThrow('the request failed (ERR_TLS_CERT_ALTNAME_INVALID)')
    // Without the test's certificate among the trusted ones, the self-signed one is refused.
    await expect(
      guardedFetch(`https://127.0.0.1:${port}/doc`, options({ ca: undefined })),
    ).rejects.toThrow(
      /the request failed \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/,
    )
  })

  it('refuses loopback addresses and names without FETCH_ALLOW_PRIVATE_ADDRESSES', async () => {
    const before = hits.length
    const strict = options({ allowPrivateAddresses: false })
    await expect(guardedFetch(`https://127.0.0.1:${port}/doc`, strict)).rejects.toThrow(
      '127.0.0.1 is a loopback address (127.0.0.1): refused',
    )
    await expect(guardedFetch(`https://[::1]:${port}/doc`, strict)).rejects.toThrow(
      'is a loopback address',
    )
    await expect(guardedFetch(`https://localhost:${port}/doc`, strict)).rejects.toThrow(
      'localhost is a loopback address (127.0.0.1): refused',
    )
    await expect(guardedFetch(`https://[::ffff:127.0.0.1]:${port}/doc`, strict)).rejects.toThrow(
      'is a loopback address',
    )
    expect(hits.length).toBe(before)
  })

  it('checks every address a name resolves to, and connects to those it checked', async () => {
    const calls: string[] = []
    const resolver =
      (...answers: LookupAddress[][]) =>
      (name: string) => {
        calls.push(name)
        return Promise.resolve(answers[Math.min(calls.length - 1, answers.length - 1)]!)
      }
    const strict = { allowPrivateAddresses: false, timeoutMs: 500 }
    await expect(
      guardedFetch(
        'https://intranet.example/doc',
        options({ ...strict, resolve: resolver([{ address: '10.1.2.3', family: 4 }]) }),
      ),
    ).rejects.toThrow('intranet.example is a private address (10.1.2.3): refused')
    await expect(
      guardedFetch(
        'https://mixed.example/doc',
        options({
          ...strict,
          resolve: resolver([
            { address: '93.184.216.34', family: 4 },
            { address: 'fe80::1', family: 6 },
          ]),
        }),
      ),
    ).rejects.toThrow('mixed.example is a link-local address (fe80::1): refused')
    // A name the system resolver does not know reaches the server at the address resolved (and
    // checked) once: a second resolution that could answer something else never happens.
    calls.length = 0
    const answer = await body(`http://rebind.example:${httpPort}/host`, {
      resolve: resolver(
        [{ address: '127.0.0.1', family: 4 }],
        [{ address: '10.0.0.1', family: 4 }],
      ),
    })
    expect(answer).toEqual({ host: `rebind.example:${httpPort}` })
    expect(calls).toEqual(['rebind.example'])
  })

  it('allows http only to loopback addresses, and only with FETCH_ALLOW_PRIVATE_ADDRESSES', async () => {
    expect(await body(`http://127.0.0.1:${httpPort}/doc`)).toEqual({ hello: 'world' })
    await expect(
      guardedFetch(`http://127.0.0.1:${httpPort}/doc`, options({ allowPrivateAddresses: false })),
    ).rejects.toThrow('only https URLs are fetched')
    await expect(
      guardedFetch(
        'http://lan.example/doc',
        options({ resolve: () => Promise.resolve([{ address: '192.168.1.10', family: 4 }]) }),
      ),
    ).rejects.toThrow('http is allowed to loopback addresses only, not 192.168.1.10')
    await expect(guardedFetch('ftp://127.0.0.1/doc', options())).rejects.toThrow(
      'only https URLs are fetched',
    )
  })

  it('refuses redirects, other statuses, credentials in the URL', async () => {
    const before = hits.filter((path) => path === '/doc').length
    await expect(guardedFetch(`https://127.0.0.1:${port}/redirect`, options())).rejects.toThrow(
      'redirects are not followed (status 302)',
    )
    expect(hits.filter((path) => path === '/doc').length).toBe(before)
    await expect(guardedFetch(`https://127.0.0.1:${port}/missing`, options())).rejects.toThrow(
      'status 404, not 200',
    )
    await expect(guardedFetch(`https://u:p@127.0.0.1:${port}/doc`, options())).rejects.toThrow(
      'the URL must not hold a user name or password',
    )
  })

  it('abandons a body past the limit, announced or not', async () => {
    for (const path of ['/big', '/big-chunked']) {
      await expect(guardedFetch(`https://127.0.0.1:${port}${path}`, options())).rejects.toThrow(
        'larger than 5120 bytes',
      )
    }
  })

  it('gives up an answer that does not come in time', async () => {
    const started = Date.now()
    await expect(
      guardedFetch(`https://127.0.0.1:${port}/slow`, options({ timeoutMs: 300 })),
    ).rejects.toThrow('no complete answer within 300 ms')
    expect(Date.now() - started).toBeLessThan(2000)
  })
})
