import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startIssuerProcess } from '@tessera/test-support'
import type { IssuerProcess } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultFetch } from '../src/internal/default-fetch.js'
import {
  API_PORT,
  EXAMPLES_DIR,
  JWT_SECRET,
  PACKAGE_DIR,
  README,
  exampleToken,
  freePort,
  packageOf,
  sectionBlocks,
  startServer,
  stopServer,
  withPorts,
} from './support/readme.js'

// The MCP server of the README, pasted into an empty directory and run against the example
// tenants, called as an MCP client would call it: without a token, then with the MCP SDK's client
// and a token asked for the server's URL.

let workDir: string
beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'tessera-verifier-readme-mcp-'))
})
afterAll(() => {
  rmSync(workDir, { recursive: true, force: true })
})

describe('the README section "Protect an MCP server"', () => {
  // The example tenants with acme's MCP resource on the port this server gets instead of 4000:
  // tokens are asked for the server's URL, so the tenant must list it.
  let mcpIssuer: IssuerProcess
  let mcpIssuerPort: number
  let apiPort: number
  let server: Awaited<ReturnType<typeof startServer>>

  beforeAll(async () => {
    const program = sectionBlocks(README, 'Protect an MCP server').find((b) => b.lang === 'js')
    expect(program, 'its js block').toBeDefined()
    apiPort = await freePort()
    const tenants = join(workDir, 'mcp-tenants')
    for (const folder of ['acme', 'globex', 'providers']) {
      cpSync(join(EXAMPLES_DIR, folder), join(tenants, folder), { recursive: true })
    }
    const acmeYaml = join(tenants, 'acme', 'tenant.yaml')
    const yaml = readFileSync(acmeYaml, 'utf8')
    expect(yaml, 'acme lists the README server').toContain(
      `- uri: http://localhost:${API_PORT}/mcp`,
    )
    writeFileSync(acmeYaml, yaml.replace(`localhost:${API_PORT}/mcp`, `localhost:${apiPort}/mcp`))
    mcpIssuer = await startIssuerProcess({ config: tenants, jwtSecret: JWT_SECRET, port: 0 })
    mcpIssuerPort = Number(new URL(mcpIssuer.url).port)

    // The program pasted into an empty directory with the packages it imports.
    const dir = join(workDir, 'mcp')
    mkdirSync(join(dir, 'node_modules', '@tessera'), { recursive: true })
    mkdirSync(join(dir, 'node_modules', '@modelcontextprotocol'), { recursive: true })
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    symlinkSync(PACKAGE_DIR, join(dir, 'node_modules', '@tessera', 'verifier'), 'dir')
    for (const pkg of ['express', '@modelcontextprotocol/sdk']) {
      symlinkSync(
        realpathSync(join(PACKAGE_DIR, 'node_modules', pkg)),
        join(dir, 'node_modules', pkg),
        'dir',
      )
    }
    const imported = [...program!.code.matchAll(/^import .* from '([^'.][^']*)'$/gm)].map((match) =>
      packageOf(match[1]!),
    )
    expect([...new Set(imported)].sort()).toEqual([
      '@modelcontextprotocol/sdk',
      '@tessera/verifier',
      'express',
    ])
    writeFileSync(join(dir, 'server.js'), withPorts(program!.code, mcpIssuerPort, apiPort))
    server = await startServer(dir, apiPort)
  })

  afterAll(async () => {
    if (server !== undefined) await stopServer(server.child)
    await mcpIssuer?.stop()
  })

  it('serves the metadata, names it in the 401, and leads to the issuer', async () => {
    const api = `http://localhost:${apiPort}`
    const anonymous = await fetch(`http://127.0.0.1:${apiPort}/mcp`, { method: 'POST' })
    expect(anonymous.status).toBe(401)
    const metadataUrl = `${api}/.well-known/oauth-protected-resource/mcp`
    expect(anonymous.headers.get('www-authenticate')).toBe(
      `Bearer realm="api", resource_metadata="${metadataUrl}"`,
    )
    const metadata = await defaultFetch(metadataUrl, {})
    expect(metadata.status).toBe(200)
    const document = (await metadata.json()) as { authorization_servers: string[] }
    expect(document).toEqual({
      resource: `${api}/mcp`,
      authorization_servers: [`http://acme.localhost:${mcpIssuerPort}`],
      bearer_methods_supported: ['header'],
      scopes_supported: ['orders:read'],
      resource_name: 'Acme orders (MCP)',
    })
    // The document as the README shows it, ports aside.
    expect(withPorts(README, mcpIssuerPort, apiPort)).toContain(JSON.stringify(document))
    // The client's next step: the authorization server's own metadata (RFC 8414).
    const issuerUrl = document.authorization_servers[0]!
    const discovery = await defaultFetch(`${issuerUrl}/.well-known/oauth-authorization-server`, {})
    expect(discovery.status).toBe(200)
    expect(await discovery.json()).toMatchObject({ issuer: issuerUrl })
  })

  it('runs the tool for the MCP SDK client with a token asked for the server', async () => {
    const mcpUrl = new URL(`http://localhost:${apiPort}/mcp`)
    const acme = `acme.localhost:${mcpIssuerPort}`
    const backOffice = 'ae47b9ad-7918-43cc-8e8c-247296b26e5f:acme-cli-demo-secret'
    const token = await exampleToken(acme, backOffice, 'alice:wonderland-42', 'orders:read', {
      resource: mcpUrl.href,
    })
    const connect = async (headers: Record<string, string>): Promise<Client> => {
      const client = new Client({ name: 'readme-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }))
      return client
    }
    const client = await connect({ authorization: `Bearer ${token}` })
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(['whoami'])
      const result = await client.callTool({ name: 'whoami', arguments: {} })
      const [content] = result.content as { type: string; text: string }[]
      expect(JSON.parse(content!.text)).toEqual({
        sub: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
        client_id: backOffice.split(':')[0],
        scopes: ['orders:read'],
      })
    } finally {
      await client.close()
    }

    // Without a token, or with one of the tenant for its other API, the client gets the 401.
    await expect(connect({})).rejects.toMatchObject({ code: 401 })
    const other = await exampleToken(acme, backOffice, 'alice:wonderland-42', 'orders:read')
    await expect(connect({ authorization: `Bearer ${other}` })).rejects.toMatchObject({
      code: 401,
    })
    expect(server.output()).not.toContain('Error')
  })
})
