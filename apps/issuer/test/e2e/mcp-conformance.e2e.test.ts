import { describe, expect, it } from 'vitest'
import { runConformance, signIn, signInAndAllow } from '../support/conformance.js'
import type { ConformanceRun } from '../support/conformance.js'
import { send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'

// The MCP conformance suite's authorization-server scenarios against `tessera dev` on loopback:
// the metadata document (client_id_metadata_document_supported included), then an authorization
// code grant with PKCE and a resource indicator, by a public client the tenant lists (signed in
// on the login page) and by one registered at /register (signed in, then allowed on the consent
// page). Every check must be SUCCESS: no failure, and no warning either.
const CLIENT = '0c000000-0000-4000-8000-000000000001'
const RESOURCE = 'https://mcp.example.test/mcp'

/** Every check of every scenario as `scenario/id: STATUS (message)`. */
function everyCheck(run: ConformanceRun): string[] {
  return [...run.scenarios].flatMap(([scenario, checks]) =>
    checks.map(
      (c) => `${scenario}/${c.id}: ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`,
    ),
  )
}

describe('the MCP conformance suite, authorization command', () => {
  const issuer = useIssuer({ command: 'dev', config: 'mcp-conformance' })

  it('passes every check of both scenarios, without a warning, for a listed client', async () => {
    const run = await runConformance({
      issuerUrl: issuer.url,
      clientId: CLIENT,
      resource: RESOURCE,
      browse: signIn('alice', 'alice-password'),
    })
    expect(run.exitCode, run.output).toBe(0)
    // The scenarios in the order of their names.
    expect(everyCheck(run)).toEqual([
      'authorization-code-grant/authorization-code-grant: SUCCESS',
      'authorization-server-metadata-endpoint/authorization-server-metadata: SUCCESS',
      'authorization-server-metadata-endpoint/authorization-server-metadata-cimd: SUCCESS',
    ])
  })

  it('passes the code grant for a public client registered at /register, through consent', async () => {
    const registration = await send(issuer.url, {
      method: 'POST',
      path: '/register',
      host: new URL(issuer.url).host,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Conformance (registered)',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'tools:read',
      }),
    })
    expect(registration.status, registration.text).toBe(201)
    const { client_id: clientId } = registration.json as { client_id: string }
    const run = await runConformance({
      issuerUrl: issuer.url,
      clientId,
      resource: RESOURCE,
      browse: signInAndAllow('alice', 'alice-password'),
    })
    expect(run.exitCode, run.output).toBe(0)
    expect(everyCheck(run)).toEqual([
      'authorization-code-grant/authorization-code-grant: SUCCESS',
      'authorization-server-metadata-endpoint/authorization-server-metadata: SUCCESS',
      'authorization-server-metadata-endpoint/authorization-server-metadata-cimd: SUCCESS',
    ])
  })
})
