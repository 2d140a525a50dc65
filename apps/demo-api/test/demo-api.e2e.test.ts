import { spawn } from 'node:child_process'
import type { Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/index.js'
import type { DemoApi } from '../src/index.js'
import {
  clientCredentialsToken,
  JWT_SECRET,
  loopbackFetch,
  passwordToken,
  startIssuer,
} from './support/issuer.js'
import type { IssuerProcess } from './support/issuer.js'

const AUDIENCE = 'https://orders.demo.test'
const HS = {
  host: 'hs.demo.test:8080',
  id: '11111111-1111-4111-8111-111111111111',
  secret: 'secret-1-01234567',
}
const RS = {
  host: 'rs.demo.test:8080',
  id: '22222222-2222-4222-8222-222222222222',
  secret: 'secret-2-01234567',
}
const OTHER = {
  host: 'other.demo.test:8080',
  id: '33333333-3333-4333-8333-333333333333',
  secret: 'secret-3-01234567',
}

let issuer: IssuerProcess
let api: DemoApi
let server: Server
let base: string
const tokens: Record<string, string> = {}

beforeAll(async () => {
  issuer = await startIssuer()
  api = createApp({
    issuers: [`http://${HS.host}`, `http://${RS.host}`],
    audience: AUDIENCE,
    secret: JWT_SECRET,
    algorithms: undefined,
    fetch: loopbackFetch(issuer.url),
  })
  server = api.app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  base = `http://127.0.0.1:${address.port}`
  tokens.hs = await passwordToken(issuer.url, HS.host, HS, 'orders:read')
  tokens.rs = await passwordToken(issuer.url, RS.host, RS, 'orders:read orders:write')
  tokens.hsWriteOnly = await passwordToken(issuer.url, HS.host, HS, 'orders:write')
  tokens.other = await passwordToken(issuer.url, OTHER.host, OTHER)
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await issuer.stop()
})

const call = (path: string, token?: string, method = 'GET') =>
  fetch(`${base}${path}`, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  })

describe('demo-api against a real issuer', () => {
  it('GET /healthz needs no token', async () => {
    const response = await call('/healthz')
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ status: 'ok' })
  })

  it('GET /orders accepts HS256 and RS256 tokens with orders:read', async () => {
    for (const [name, alg] of [
      ['hs', 'HS256'],
      ['rs', 'RS256'],
    ] as const) {
      const orders = await call('/orders', tokens[name])
      expect(orders.status, name).toBe(200)
      expect(await orders.json()).toMatchObject({ orders: [{ id: 'ord-1' }, { id: 'ord-2' }] })
      const me = await call('/me', tokens[name])
      expect(await me.json()).toMatchObject({ sub: 'u', alg })
    }
    const health = (await (await call('/healthz')).json()) as { accepted: Record<string, number> }
    expect(health.accepted.HS256).toBeGreaterThanOrEqual(2)
    expect(health.accepted.RS256).toBeGreaterThanOrEqual(2)
  })

  it('GET /orders without a token answers 401 with a challenge', async () => {
    const response = await call('/orders')
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="demo-api"')
  })

  it('GET /orders with only orders:write answers 403 insufficient_scope', async () => {
    const response = await call('/orders', tokens.hsWriteOnly)
    expect(response.status).toBe(403)
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer realm="demo-api", error="insufficient_scope", error_description="The token lacks a required scope", scope="orders:read"',
    )
  })

  it('POST /orders needs orders:write', async () => {
    expect((await call('/orders', tokens.rs, 'POST')).status).toBe(201)
    expect((await call('/orders', tokens.hs, 'POST')).status).toBe(403)
  })

  it('serves a service calling with a client_credentials token, by its scopes', async () => {
    const services = [
      { host: HS.host, id: '44444444-4444-4444-8444-444444444444', secret: 'service-secret-1' },
      { host: RS.host, id: '55555555-5555-4555-8555-555555555555', secret: 'service-secret-2' },
    ]
    for (const service of services) {
      const readOnly = await clientCredentialsToken(
        issuer.url,
        service.host,
        service,
        'orders:read',
      )
      expect((await call('/orders', readOnly)).status).toBe(200)
      const me = await call('/me', readOnly)
      // No user: the token is about the service itself.
      expect(await me.json()).toMatchObject({
        sub: service.id,
        client_id: service.id,
        iss: `http://${service.host}`,
        scopes: ['orders:read'],
      })
      expect((await call('/orders', readOnly, 'POST')).status).toBe(403)
      const full = await clientCredentialsToken(issuer.url, service.host, service)
      const created = await call('/orders', full, 'POST')
      expect(created.status).toBe(201)
      expect(await created.json()).toMatchObject({ created_by: service.id })
    }
  })

  it('refuses a token of a tenant it does not trust, though it shares the secret', async () => {
    const response = await call('/orders', tokens.other)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('refuses a tampered token', async () => {
    const [header, , signature] = tokens.hs!.split('.') as [string, string, string]
    const payload = Buffer.from(
      JSON.stringify({ iss: `http://${HS.host}`, exp: 9_999_999_999, scope: 'orders:read' }),
    ).toString('base64url')
    const response = await call('/orders', `${header}.${payload}.${signature}`)
    expect(response.status).toBe(401)
  })
})

describe('demo-api main', () => {
  const main = fileURLToPath(new URL('../dist/main.js', import.meta.url))

  function run(env: Record<string, string>) {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    return { child, output: () => ({ stdout, stderr }) }
  }

  it('listens with settings from the environment and verifies HS256 tokens', async () => {
    const { child, output } = run({
      ISSUERS: `http://${HS.host}, http://${RS.host}`,
      AUDIENCE,
      JWT_SECRET,
      PORT: '0',
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', () => {
          const line = output()
            .stdout.split('\n')
            .find((l) => l.includes('demo-api listening'))
          if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url)
        })
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${output().stderr}`)))
      })
      const response = await fetch(`${url}/orders`, {
        headers: { authorization: `Bearer ${tokens.hs}` },
      })
      expect(response.status).toBe(200)
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  })

  it('refuses to start with bad settings, one line per problem', async () => {
    const { child, output } = run({ JWT_SECRET: 'short', PORT: 'x' })
    const code = await new Promise((resolve) => child.once('exit', resolve))
    expect(code).toBe(1)
    expect(output().stderr).toContain('ISSUERS: is required')
    expect(output().stderr).toContain('JWT_SECRET: must be at least 32 characters')
    expect(output().stderr).toContain('PORT:')
  })
})
