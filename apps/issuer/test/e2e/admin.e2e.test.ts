import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo, Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, HS, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'

/** The TCP ports process `pid` listens on (Linux: its socket inodes in /proc/net/tcp*). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1]!)
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      // local_address is ADDRESS:PORT in hex; state 0A is LISTEN; field 9 is the inode.
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) {
        ports.push(Number.parseInt(fields[1]!.split(':')[1]!, 16))
      }
    }
  }
  return ports.sort((a, b) => a - b)
}

const portOf = (url: string): number => Number(new URL(url).port)

// /metrics names every tenant, so it is served on a listener of its own.
describe('the admin listener', () => {
  const tmp = tempDir()
  const vars = {
    JWT_SECRET,
    TESSERA_CONFIG: join(FIXTURES, 'basic'),
    DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
  }
  let cli: IssuerProcess

  beforeAll(async () => {
    cli = await startIssuer({ command: 'dev', env: { ...vars, ADMIN_PORT: '0' } })
  })
  afterAll(async () => {
    await cli.close()
    tmp.remove()
  })

  it('listens on a free port with ADMIN_PORT=0, on 127.0.0.1, and logs it', () => {
    expect(cli.admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(portOf(cli.admin)).toBeGreaterThan(0)
    expect(portOf(cli.admin)).not.toBe(portOf(cli.url))
    expect(listeningPorts(cli.child.pid!)).toEqual(
      [portOf(cli.url), portOf(cli.admin)].sort((a, b) => a - b),
    )
  })

  it('serves /metrics there, naming the tenants; the tenants’ port answers it 404', async () => {
    const issued = await postForm(cli.url, HS.host, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      client_id: HS.client,
      client_secret: HS.secret,
    })
    expect(issued.status).toBe(200)
    const metrics = await send(cli.admin, { path: '/metrics', host: 'anything' })
    expect(metrics.status).toBe(200)
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/)
    expect(metrics.text).toContain('tessera_tokens_issued_total{tenant="hs",grant_type="password"')
    expect(metrics.text).toContain('tessera_http_request_duration_seconds')
    expect(metrics.text).toContain('process_cpu_seconds_total')

    for (const host of [HS.host, 'anything', '127.0.0.1']) {
      const res = await send(cli.url, { path: '/metrics', host })
      expect(res.status).toBe(404)
      expect(res.text).not.toContain('tessera_')
    }
  })

  it('answers /healthz and /readyz on both ports', async () => {
    for (const url of [cli.url, cli.admin]) {
      expect((await send(url, { path: '/healthz', host: 'probe' })).json).toEqual({ status: 'ok' })
      expect((await send(url, { path: '/readyz', host: 'probe' })).json).toEqual({
        status: 'ready',
      })
    }
  })

  it('answers nothing else there: 404 and 405 as JSON errors, nosniff on every answer', async () => {
    const cases = [
      { path: '/metrics', status: 200 },
      { path: '/metrics', method: 'HEAD', status: 200 },
      { path: '/token', method: 'POST', status: 404 },
      { path: '/.well-known/jwks.json', status: 404 },
      { path: '/admin', status: 404 },
      { path: '/metrics', method: 'POST', status: 405 },
      { path: '/healthz', method: 'DELETE', status: 405 },
    ]
    for (const { path, method, status } of cases) {
      const res = await send(cli.admin, { path, method, host: HS.host })
      expect(res.status, `${method ?? 'GET'} ${path}`).toBe(status)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      if (status === 404)
        expect(res.json).toEqual({ error: 'invalid_request', error_description: 'not found' })
      if (status === 405) expect(res.headers.allow).toBe('GET, HEAD')
    }
  })

  it('answers every admin API route 404 without ADMIN_TOKEN, a bearer token or not', async () => {
    const routes = [
      ['GET', '/admin/tenants'],
      ['GET', '/admin/tenants/rs/keys'],
      ['POST', '/admin/tenants/rs/keys/rotate'],
      ['POST', '/admin/tenants/rs/keys/2026-01-01/revoke'],
    ]
    for (const [method, path] of routes) {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: 'Bearer QWRtaW4tdG9rZW4tZm9yLXRlc3RzLW9ubHktMDEyMzQ1=' },
      ]) {
        const res = await send(cli.admin, { method, path: path!, host: 'admin.test', headers })
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(res.headers['www-authenticate']).toBeUndefined()
        expect(res.json).toEqual({ error: 'invalid_request', error_description: 'not found' })
      }
    }
    expect(cli.logs.some((line) => line.includes('"msg":"admin call"'))).toBe(false)
    const listening = cli.logs.find((line) => line.includes('"msg":"tessera issuer listening"'))!
    expect(JSON.parse(listening)).toMatchObject({ adminApi: false })
  })
})

describe('ADMIN_PORT=off and a taken ADMIN_PORT', () => {
  const tmp = tempDir()
  const vars = {
    JWT_SECRET,
    TESSERA_CONFIG: join(FIXTURES, 'basic'),
    DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
  }
  afterAll(() => tmp.remove())

  it('opens no admin port with ADMIN_PORT=off, and stops cleanly', async () => {
    const cli = await startIssuer({ command: 'dev', env: { ...vars, ADMIN_PORT: 'off' } })
    try {
      expect(cli.admin).toBe('off')
      expect(listeningPorts(cli.child.pid!)).toEqual([portOf(cli.url)])
      expect((await send(cli.url, { path: '/metrics', host: HS.host })).status).toBe(404)
    } finally {
      await cli.close()
    }
    expect(cli.child.exitCode).toBe(0)
  })

  it('closes both ports on SIGTERM, keep-alive connections included', async () => {
    const cli = await startIssuer({ command: 'dev', env: { ...vars, ADMIN_PORT: '0' } })
    // An idle keep-alive connection to each port.
    const agents = await Promise.all(
      [cli.url, cli.admin].map(async (url) => {
        const { Agent, request } = await import('node:http')
        const agent = new Agent({ keepAlive: true })
        await new Promise<void>((resolve, reject) => {
          request(`${url}/healthz`, { agent }, (res) => {
            res.resume()
            res.on('end', resolve)
          })
            .on('error', reject)
            .end()
        })
        return agent
      }),
    )
    const started = Date.now()
    await cli.close()
    expect(cli.child.exitCode).toBe(0)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(cli.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true)
    for (const agent of agents) agent.destroy()
  })

  it('refuses to start when ADMIN_PORT is taken, naming it, and leaves nothing listening', async () => {
    const taken: Server = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as AddressInfo
    try {
      const result = await runCli(['dev', '--port', '0', '--host', '127.0.0.1'], {
        ...vars,
        ADMIN_PORT: String(port),
      })
      expect(result.status).toBe(1)
      expect(result.stderr).toContain(`tessera: port ${port} is in use; set ADMIN_PORT\n`)
      expect(result.stderr).not.toMatch(/at .*\.js:\d+/)
    } finally {
      taken.close()
    }
  })
})
