import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXTURES, HS, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'

/** A raw TCP connection to `url`, collecting what the server sends and when it closes. */
async function open(url: string): Promise<{
  socket: Socket
  received: () => string
  closed: Promise<number>
}> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let text = ''
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
  socket.on('error', () => undefined)
  const started = Date.now()
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(Date.now() - started)),
  )
  return { socket, received: () => text, closed }
}

/** Whichever comes first: `promise`, or `ms` milliseconds (then `undefined`). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))])
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Node's defaults let a client hold a socket for 300 s with a request it never
// finishes; the CLI's listeners cut such clients off within 30 s. One process, three clients
// at once, so the test lasts as long as the longest timeout.
describe('server timeouts', () => {
  const tmp = tempDir()
  let cli: IssuerProcess

  beforeAll(async () => {
    cli = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: join(FIXTURES, 'basic'),
        DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
        ADMIN_PORT: '0',
      },
    })
  })
  afterAll(async () => {
    await cli.close()
    tmp.remove()
  })

  it('cuts off a short body and trickled headers within 30 s, and keeps idle keep-alive open', async () => {
    // 1. Declares 100 bytes of body, sends 10, then nothing.
    const shortBody = await open(cli.url)
    shortBody.socket.write(
      `POST /token HTTP/1.1\r\nHost: ${HS.host}\r\n` +
        'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n' +
        'grant_type',
    )

    // 2. Sends its headers one byte a second: each byte in time, the whole never. 3. The same
    // on the admin port.
    const trickle = await open(cli.url)
    const adminTrickle = await open(cli.admin)
    const headers = `GET /healthz HTTP/1.1\r\nHost: ${HS.host}\r\nX-Slow: ${'a'.repeat(60)}\r\n\r\n`
    let stop = false
    const trickling = Promise.all(
      [trickle, adminTrickle].map(async ({ socket }) => {
        for (const char of headers) {
          if (stop || socket.destroyed) return
          socket.write(char)
          await sleep(1000)
        }
      }),
    )

    // 4. A well-behaved keep-alive client that stays idle longer than the headers timeout.
    const idle = await open(cli.url)
    const probe = `GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n`
    idle.socket.write(probe)

    const [shortMs, trickleMs, adminMs] = await Promise.all(
      [shortBody, trickle, adminTrickle].map(({ closed }) => within(closed, 30_000)),
    )
    stop = true
    await trickling
    // Within 30 s each (undefined: still open after 30 s).
    expect(shortMs).toBeLessThan(30_000)
    expect(trickleMs).toBeLessThan(30_000)
    expect(adminMs).toBeLessThan(30_000)
    // The headers limit is the shorter one.
    expect(trickleMs!).toBeLessThan(shortMs!)
    for (const client of [shortBody, trickle, adminTrickle]) {
      const answer = client.received()
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
      expect(answer).toContain('X-Content-Type-Options: nosniff')
      expect(answer).toContain('Connection: close')
      expect(answer).toContain(
        '{"error":"invalid_request","error_description":"the request was not received in time"}',
      )
    }

    // The idle keep-alive connection, silent all along, still serves a second request.
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200 OK/)
    expect(idle.socket.destroyed).toBe(false)
    idle.socket.write(probe)
    await within(
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (idle.received().split('HTTP/1.1 200 OK').length === 3) resolve()
          else setTimeout(check, 20)
        }
        check()
      }),
      5000,
    )
    expect(idle.received().split('HTTP/1.1 200 OK')).toHaveLength(3)
    idle.socket.destroy()
    // The issuer still answers everyone else.
    const again = await open(cli.url)
    again.socket.write(`GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n`)
    await within(again.closed, 5000)
    expect(again.received()).toMatch(/^HTTP\/1\.1 200 OK/)
  }, 60_000)

  it('answers malformed HTTP with 400 and oversized headers with 431, as JSON errors', async () => {
    const cases = [
      ['GARBAGE\r\n\r\n', 400, 'Bad Request', 'malformed HTTP request'],
      [
        `GET /healthz HTTP/1.1\r\nHost: probe\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'Request Header Fields Too Large',
        'request headers too large',
      ],
    ] as const
    for (const url of [cli.url, cli.admin]) {
      for (const [request, status, reason, description] of cases) {
        const client = await open(url)
        client.socket.write(request)
        expect(await within(client.closed, 5000)).toBeDefined()
        const answer = client.received()
        expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} ${reason}\r\n`))
        expect(answer).toContain('X-Content-Type-Options: nosniff')
        expect(answer).toContain(`{"error":"invalid_request","error_description":"${description}"}`)
      }
    }
  })
})
