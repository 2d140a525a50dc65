import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../support/client-assertion.js'
import { json, startDocumentServer, TEST_CERT_FILE } from '../support/client-documents.js'
import type { DocumentServer } from '../support/client-documents.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import {
  connectWithLogin,
  freePort,
  MCP_REDIRECT,
  MCP_SCOPE,
  sdkFetch,
  startMcpServer,
  TestOAuthProvider,
  whoami,
} from '../support/mcp-client.js'
import type { McpServer } from '../support/mcp-client.js'
import { startTlsProxy } from '../support/tls-proxy.js'
import type { TlsProxy } from '../support/tls-proxy.js'

// The official MCP TypeScript SDK client, with no client registered beforehand, against the
// example MCP server guarded by the verifier: it finds the issuer (RFC 9728, RFC 8414), registers
// at /register or names its client ID metadata document, sends alice to /authorize (login,
// consent), redeems the code with PKCE and `resource`, and calls a tool. Under `tessera dev`
// (RS256: the server checks tokens with the issuer's JWKS) and `tessera start`: HS256 with its
// https issuer URL reached on loopback in plain http, and RS256 behind a proxy that terminates
// TLS, every request of the SDK, the browser and the MCP server to the issuer over https.

interface Mode {
  name: string
  command: 'dev' | 'start'
  /** The tenant's host (under dev, the issuer URL is http://127.0.0.1:<port>); none with tls. */
  host?: string
  algorithm: 'RS256' | 'HS256'
  /** Behind a TLS proxy on `localhost:<port>`, the tenant's host. */
  tls?: true
}

const MODES: Mode[] = [
  { name: 'dev', command: 'dev', host: '127.0.0.1', algorithm: 'RS256' },
  { name: 'start', command: 'start', host: 'auth.mcp.test', algorithm: 'HS256' },
  { name: 'start behind TLS', command: 'start', algorithm: 'RS256', tls: true },
]
const JWT_SECRET = 'mcp-client-e2e-secret-0123456789-abcdef'

function tenants(mode: Mode, host: string, mcpUrl: string): string {
  return `name: mcp
config:
  hosts: [${host}]
  jwt_algorithm: ${mode.algorithm}
  providers: [providers/users.mjs]
  clients: []
  resources:
    - uri: ${mcpUrl}
      scopes: [${MCP_SCOPE}]
  dynamic_clients:
    registration: true
    metadata_documents: true
    scopes: [${MCP_SCOPE}]
`
}

/** The request lines of `calls` to `path` of any host. */
const callsTo = (calls: string[], path: string): string[] =>
  calls.filter((call) => new URL(call.split(' ')[1]!).pathname === path)

describe.each(MODES)('the MCP SDK client under tessera $name', (mode) => {
  let tmp: ReturnType<typeof tempDir>
  let docs: DocumentServer
  let issuer: IssuerProcess
  let server: McpServer
  let issuerUrl: string
  let proxy: TlsProxy | undefined
  /** Where the issuer is reached: its process, or the TLS proxy in front of it. */
  let base: string

  beforeAll(async () => {
    tmp = tempDir()
    docs = await startDocumentServer()
    const port = await freePort()
    const mcpUrl = `http://localhost:${port}/mcp`
    if (mode.tls) proxy = await startTlsProxy()
    const host = proxy === undefined ? mode.host! : `localhost:${proxy.port}`
    issuer = await startIssuer({
      command: mode.command,
      config: writeConfig(tmp.dir, tenants(mode, host, mcpUrl)),
      vars: {
        JWT_SECRET,
        FETCH_ALLOW_PRIVATE_ADDRESSES: 'true',
        NODE_EXTRA_CA_CERTS: TEST_CERT_FILE,
        ...(mode.command === 'start' ? { KEY_ENCRYPTION_SECRET: JWT_SECRET } : {}),
        ...(mode.tls ? { TRUST_PROXY: '1' } : {}),
      },
    })
    proxy?.forwardTo(issuer.url)
    base = proxy?.url ?? issuer.url
    issuerUrl =
      mode.command === 'dev' ? `http://${host}:${new URL(issuer.url).port}` : `https://${host}`
    server = await startMcpServer({
      port,
      issuer: issuerUrl,
      ...(mode.algorithm === 'HS256' ? { jwtSecret: JWT_SECRET } : {}),
      vars: { NODE_EXTRA_CA_CERTS: TEST_CERT_FILE },
    })
  })
  afterAll(async () => {
    await server?.close()
    await proxy?.close()
    await issuer?.close()
    await docs?.close()
    tmp?.remove()
  })

  it('registers at /register, passes login and consent, and calls a tool', async () => {
    const provider = new TestOAuthProvider(() => base)
    const routed = sdkFetch(issuerUrl, base)
    const connection = await connectWithLogin(server.url, provider, routed.fetch)
    try {
      const registered = provider.clientInformation()!.client_id
      expect(registered).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/)
      expect(await whoami(connection)).toEqual({
        sub: 'user-alice',
        client_id: registered,
        aud: server.url,
        scopes: [MCP_SCOPE],
      })
      // Its own discovery: the 401's resource_metadata, the issuer's metadata, then /register.
      expect(routed.calls.slice(0, 4)).toEqual([
        `POST ${server.url}`,
        `GET ${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`,
        `GET ${issuerUrl}/.well-known/oauth-authorization-server`,
        `POST ${issuerUrl}/register`,
      ])
      const [visit] = provider.visits
      const asked = Object.fromEntries(visit!.authorizationUrl.searchParams)
      expect(asked).toMatchObject({
        client_id: registered,
        redirect_uri: MCP_REDIRECT,
        resource: server.url,
        scope: MCP_SCOPE,
        code_challenge_method: 'S256',
      })
      expect(visit!.consentPage.text).toContain('Tessera MCP e2e client')
      expect(visit!.consentPage.text).toContain(MCP_SCOPE)
      expect(visit!.consentPage.text).toContain(server.url)
      expect(visit!.consentPage.text).not.toContain('client-host')
      // Over https (the proxy's X-Forwarded-Proto), the login cookie is a __Host- one.
      const cookies = visit!.consentPage.headers['set-cookie']?.join('\n') ?? ''
      expect(cookies.includes('__Host-tessera_login=')).toBe(mode.tls === true)
    } finally {
      await connection.client.close()
    }
    expect(server.output()).not.toMatch(/error/i)
  })

  it('names a client ID metadata document instead: no /register, the consent page shows its host', async () => {
    const path = `/mcp-client-${mode.command}.json`
    const clientId = `${docs.https}${path}`
    docs.routes.set(path, () =>
      json({
        client_id: clientId,
        client_name: 'Documented MCP client',
        redirect_uris: [MCP_REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    )
    const provider = new TestOAuthProvider(() => base, { clientMetadataUrl: clientId })
    const routed = sdkFetch(issuerUrl, base)
    const connection = await connectWithLogin(server.url, provider, routed.fetch)
    try {
      expect(await whoami(connection)).toEqual({
        sub: 'user-alice',
        client_id: clientId,
        aud: server.url,
        scopes: [MCP_SCOPE],
      })
    } finally {
      await connection.client.close()
    }
    expect(callsTo(routed.calls, '/register')).toEqual([])
    expect(callsTo(routed.calls, '/token')).toEqual([`POST ${issuerUrl}/token`])
    expect(docs.hits.get(path)).toBeGreaterThanOrEqual(1)
    const [visit] = provider.visits
    expect(visit!.authorizationUrl.searchParams.get('client_id')).toBe(clientId)
    const page = visit!.consentPage.text
    expect(page).toContain('Documented MCP client')
    expect(page).toContain(
      `from <strong class="client-host"><bdi>${new URL(docs.https).host}</bdi></strong>`,
    )
  })

  it('stops before registering when connected at another origin than the resource names', async () => {
    const elsewhere = server.url.replace('localhost', '127.0.0.1')
    const provider = new TestOAuthProvider(() => base)
    const routed = sdkFetch(issuerUrl, base)
    await expect(connectWithLogin(elsewhere, provider, routed.fetch)).rejects.toThrow(
      `Protected resource ${server.url} does not match expected ${elsewhere}`,
    )
    // It read both metadata documents, then stopped: no registration, no authorization.
    expect(routed.calls).toEqual([
      `POST ${elsewhere}`,
      `GET ${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`,
      `GET ${issuerUrl}/.well-known/oauth-authorization-server`,
    ])
    expect(provider.visits).toEqual([])
  })
})
