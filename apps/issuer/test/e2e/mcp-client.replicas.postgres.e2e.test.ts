import { createTestDatabase } from '@tessera/test-support'
import type { TestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../support/client-assertion.js'
import { json, startDocumentServer, TEST_CERT_FILE } from '../support/client-documents.js'
import type { DocumentServer } from '../support/client-documents.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import {
  connectOnce,
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

// The MCP SDK client against two `tessera start` replicas sharing PostgreSQL: what one replica
// stored (a registration, a refresh token, a consent) the other one uses. A client ID metadata
// document client allowed at A is not asked again at B; a registered client allowed at A
// refreshes its token at B once A is gone.

const HOST = 'auth.mcp.test'
const ISSUER = `https://${HOST}`
const JWT_SECRET = 'mcp-replicas-e2e-secret-0123456789-abcdef'

describe('the MCP SDK client against two replicas sharing PostgreSQL', () => {
  let database: TestDatabase
  let tmp: ReturnType<typeof tempDir>
  let a: IssuerProcess
  let b: IssuerProcess
  let server: McpServer
  let docs: DocumentServer

  beforeAll(async () => {
    database = await createTestDatabase()
    docs = await startDocumentServer()
    tmp = tempDir()
    const port = await freePort()
    const mcpUrl = `http://localhost:${port}/mcp`
    const config = writeConfig(
      tmp.dir,
      `name: mcp
config:
  hosts: [${HOST}]
  jwt_algorithm: HS256
  providers: [providers/users.mjs]
  clients: []
  resources:
    - uri: ${mcpUrl}
      scopes: [${MCP_SCOPE}]
  dynamic_clients:
    registration: true
    metadata_documents: true
    scopes: [${MCP_SCOPE}]
`,
    )
    const options = {
      command: 'start',
      config,
      databaseUrl: database.url,
      vars: {
        JWT_SECRET,
        FETCH_ALLOW_PRIVATE_ADDRESSES: 'true',
        NODE_EXTRA_CA_CERTS: TEST_CERT_FILE,
      },
    } as const
    // One after the other: the first migrates the database.
    a = await startIssuer(options)
    b = await startIssuer(options)
    server = await startMcpServer({ port, issuer: ISSUER, jwtSecret: JWT_SECRET })
  })
  afterAll(async () => {
    await server?.close()
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
    await docs?.close()
    tmp?.remove()
  })

  it('remembers at B the consent a metadata document client got at A', async () => {
    const clientId = `${docs.https}/replicated-client.json`
    docs.routes.set('/replicated-client.json', () =>
      json({
        client_id: clientId,
        client_name: 'Replicated MCP client',
        redirect_uris: [MCP_REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      }),
    )
    const expected = { sub: 'user-alice', client_id: clientId, aud: server.url }
    for (const [replica, status] of [
      [a, 200],
      [b, 303],
    ] as const) {
      const provider = new TestOAuthProvider(() => replica.url, { clientMetadataUrl: clientId })
      const routed = sdkFetch(ISSUER, replica.url)
      const connection = await connectWithLogin(server.url, provider, routed.fetch)
      try {
        expect(await whoami(connection)).toMatchObject(expected)
      } finally {
        await connection.client.close()
      }
      expect(provider.visits.map((visit) => visit.consentPage.status)).toEqual([status])
      expect(routed.calls.some((call) => call.includes('/register'))).toBe(false)
    }
  })

  it('registers and consents at A, refreshes at B once A is gone, and B remembers the consent', async () => {
    let replica = a
    const provider = new TestOAuthProvider(() => replica.url)
    const routed = sdkFetch(ISSUER, a.url)
    const first = await connectWithLogin(server.url, provider, routed.fetch)
    const registered = provider.clientInformation()!.client_id
    const expected = { sub: 'user-alice', client_id: registered, aud: server.url }
    try {
      expect(await whoami(first)).toMatchObject(expected)
    } finally {
      await first.client.close()
    }
    expect(provider.visits).toHaveLength(1)
    expect(provider.visits[0]!.consentPage.status).toBe(200)
    const refreshToken = provider.tokens()!.refresh_token
    expect(refreshToken).toEqual(expect.any(String))

    await a.close()
    replica = b
    routed.route(b.url)
    routed.calls.length = 0
    // The server refuses the access token kept: the SDK refreshes it at B, then calls again.
    provider.spoilAccessToken()
    const second = await connectOnce(server.url, provider, routed.fetch)
    try {
      expect(await whoami(second)).toMatchObject(expected)
    } finally {
      await second.client.close()
    }
    expect(routed.calls).toContain(`POST ${ISSUER}/token`)
    expect(routed.calls.some((call) => call.includes('/register'))).toBe(false)
    expect(provider.visits).toHaveLength(1)
    expect(provider.tokens()!.refresh_token).not.toBe(refreshToken)

    // A new authorization of the same client at B: alice signs in, and is not asked again.
    const again = new TestOAuthProvider(() => b.url)
    again.saveClientInformation(provider.clientInformation()!)
    const third = await connectWithLogin(server.url, again, sdkFetch(ISSUER, b.url).fetch)
    try {
      expect(await whoami(third)).toMatchObject(expected)
    } finally {
      await third.client.close()
    }
    expect(again.visits.map((visit) => visit.consentPage.status)).toEqual([303])
    expect(server.output()).not.toMatch(/error/i)
  })
})
