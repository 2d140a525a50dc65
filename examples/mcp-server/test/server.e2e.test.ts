import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loopbackFetch, startIssuerProcess } from '@tessera/test-support'
import type { IssuerProcess } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The example as its README runs it: `node server.mjs` against `tessera dev` serving the example
// tenants, called by the MCP TypeScript SDK's client with a token the issuer gave for it.

const APP_DIR = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLES = fileURLToPath(new URL('../..', import.meta.url))
const JWT_SECRET = 'mcp-example-e2e-secret-0123456789-abcdef'
const BACK_OFFICE = { id: 'ae47b9ad-7918-43cc-8e8c-247296b26e5f', secret: 'acme-cli-demo-secret' }
/** alice of examples/providers/demo-users.mjs */
const ALICE = 'c3a1b6f0-5d2e-4c8f-9a71-0e2d4b6f8a10'

/** A port free right now: the kernel picks it, we release it and hand it to the server. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * The example tenants with the MCP server's resource on `port` instead of the README's 4000, as
 * an operator who runs the server elsewhere would write them.
 */
function examplesFor(port: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-mcp-example-'))
  for (const folder of ['acme', 'providers']) {
    cpSync(join(EXAMPLES, folder), join(dir, folder), { recursive: true })
  }
  const tenant = join(dir, 'acme', 'tenant.yaml')
  const yaml = readFileSync(tenant, 'utf8')
  expect(yaml).toContain('- uri: http://localhost:4000/mcp')
  writeFileSync(tenant, yaml.replace('http://localhost:4000/mcp', `http://localhost:${port}/mcp`))
  return dir
}

/** `node server.mjs`, resolved once it says it listens. */
async function startServer(env: Record<string, string>): Promise<{
  child: ChildProcess
  output: () => string
}> {
  const child = spawn(process.execPath, ['server.mjs'], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (output.includes('listening on')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server.mjs exited with ${code}: ${output}`)))
  })
  return { child, output: () => output }
}

describe('examples/mcp-server', () => {
  let issuer: IssuerProcess
  let server: Awaited<ReturnType<typeof startServer>>
  let tenants: string
  let mcpUrl: string
  let acme: string

  beforeAll(async () => {
    const port = await freePort()
    mcpUrl = `http://localhost:${port}/mcp`
    tenants = examplesFor(port)
    issuer = await startIssuerProcess({ config: tenants, jwtSecret: JWT_SECRET })
    acme = `http://acme.localhost:${new URL(issuer.url).port}`
    server = await startServer({ PORT: String(port), ISSUER: acme, JWT_SECRET })
  })

  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server.child.once('exit', resolve))
      server.child.kill('SIGTERM')
      await exited
    }
    await issuer?.stop()
    rmSync(tenants, { recursive: true, force: true })
  })

  /** A token of the back-office client for alice, by the password grant, with `resource`. */
  async function token(resource?: string): Promise<string> {
    const response = await loopbackFetch(issuer.url)(`${acme}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'alice',
        password: 'wonderland-42',
        scope: 'orders:read',
        client_id: BACK_OFFICE.id,
        client_secret: BACK_OFFICE.secret,
        ...(resource === undefined ? {} : { resource }),
      }),
    })
    expect(response.status).toBe(200)
    return ((await response.json()) as { access_token: string }).access_token
  }

  async function connect(accessToken?: string): Promise<Client> {
    const headers: Record<string, string> =
      accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers },
    })
    const client = new Client({ name: 'example-test', version: '1.0.0' })
    await client.connect(transport)
    return client
  }

  it('calls its tools through the MCP SDK client with a token asked for its URL', async () => {
    const client = await connect(await token(mcpUrl))
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(['echo', 'whoami'])
      const whoami = await client.callTool({ name: 'whoami', arguments: {} })
      const [content] = whoami.content as { type: string; text: string }[]
      expect(JSON.parse(content!.text)).toEqual({
        sub: ALICE,
        client_id: BACK_OFFICE.id,
        aud: mcpUrl,
        scopes: ['orders:read'],
      })
      const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello' } })
      expect(echo.content).toEqual([{ type: 'text', text: 'hello' }])
    } finally {
      await client.close()
    }
  })

  it('refuses a token without a resource: its audience is the tenant API, not this server', async () => {
    const response = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await token()}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('answers a body that is not JSON with a JSON-RPC parse error, not a 500', async () => {
    const response = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await token(mcpUrl)}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{',
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } })
  })

  it('answers 401 without a token, naming its metadata, which names the issuer', async () => {
    await expect(connect()).rejects.toMatchObject({ code: 401 })
    const response = await fetch(mcpUrl, { method: 'POST' })
    expect(response.status).toBe(401)
    const metadataUrl = `${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource/mcp`
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer realm="api", resource_metadata="${metadataUrl}"`,
    )
    const metadata = await fetch(metadataUrl)
    expect(await metadata.json()).toEqual({
      resource: mcpUrl,
      authorization_servers: [acme],
      bearer_methods_supported: ['header'],
      scopes_supported: ['orders:read'],
      resource_name: 'Tessera example MCP server',
    })
  })

  it('answers GET and DELETE with 405: a stateless server has no stream and no session', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl, { method })
      expect(response.status, method).toBe(405)
      expect(response.headers.get('allow')).toBe('POST')
    }
    expect(server.output()).not.toMatch(/error/i)
  })
})
