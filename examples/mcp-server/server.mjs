// An MCP server whose tools only answer requests with an access token from Tessera. It serves its
// OAuth 2.0 protected resource metadata (RFC 9728), so that an MCP client that calls it without a
// token learns, from the 401, where to get one. See README.md.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createVerifier } from '@tessera/verifier'
import { bearer, protectedResourceMetadata, requireScope } from '@tessera/verifier/express'
import express from 'express'
import * as z from 'zod'

const port = Number(process.env.PORT ?? 4000)
// The issuer of the tokens: the example tenant acme under `pnpm start`.
const issuer = process.env.ISSUER ?? 'http://acme.localhost:3000'
// This server's URL as clients call it: the `resource` they ask tokens for, and so their `aud`.
const resource = process.env.MCP_URL ?? `http://localhost:${port}/mcp`
const SCOPE = 'orders:read'

const verifier = createVerifier({
  issuer,
  audience: resource,
  // acme signs with HS256 and the issuer's JWT_SECRET; an RS256 tenant needs no secret (JWKS).
  secret: process.env.JWT_SECRET,
  resourceMetadata: { scopesSupported: [SCOPE], resourceName: 'Tessera example MCP server' },
})

/** An MCP server whose tools answer for `auth`, the verified token of one request. */
function mcpServer(auth) {
  const server = new McpServer({ name: 'tessera-example', version: '1.0.0' })
  server.registerTool(
    'whoami',
    { description: 'Says whom the access token speaks for, and for what' },
    () => {
      const { sub, client_id: clientId, aud } = auth.payload
      const answer = { sub, client_id: clientId, aud, scopes: auth.scopes }
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] }
    },
  )
  server.registerTool(
    'echo',
    { description: 'Answers the text it is given', inputSchema: { text: z.string().max(1000) } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  )
  return server
}

/** A JSON-RPC error answer, for what happens outside the MCP transport. */
function rpcError(res, status, code, message) {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null })
}

const app = express()
app.use(protectedResourceMetadata(verifier))
const path = new URL(resource).pathname
app.post(path, bearer(verifier), requireScope(SCOPE), async (req, res) => {
  // Stateless Streamable HTTP: one server and transport per request; the transport reads the body.
  const server = mcpServer(req.auth)
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
  res.on('close', () => void transport.close())
  try {
    await server.connect(transport)
    await transport.handleRequest(req, res)
  } catch (error) {
    console.error('MCP request failed:', error instanceof Error ? error.message : error)
    if (!res.headersSent) rpcError(res, 500, -32603, 'Internal error')
  }
})
// Stateless: no stream to open with GET and no session to end with DELETE.
app.all(path, (_req, res) => rpcError(res.set('allow', 'POST'), 405, -32000, 'Method not allowed'))

app.listen(port, () => console.log(`MCP server listening on ${resource} (tokens of ${issuer})`))
