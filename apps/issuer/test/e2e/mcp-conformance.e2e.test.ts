import { describe, expect, it } from 'vitest'
import { runConformance, signIn } from '../support/conformance.js'
import type { ConformanceRun } from '../support/conformance.js'
import { useIssuer } from '../support/issuer.js'

// The MCP conformance suite's authorization-server scenarios against `tessera dev` on loopback:
// the metadata document, then an authorization code grant with PKCE and a resource indicator by
// a public client of the tenant, signed in on the login page.
const CLIENT = '0c000000-0000-4000-8000-000000000001'
const RESOURCE = 'https://mcp.example.test/mcp'

/** The checks of one scenario, each as `id: STATUS (message)`. */
function statuses(run: ConformanceRun, scenario: string): string[] {
  const checks = run.scenarios.get(scenario)
  expect(checks, `${scenario} ran:\n${run.output}`).toBeDefined()
  return checks!.map((c) => `${c.id}: ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`)
}

describe('the MCP conformance suite, authorization command', () => {
  const issuer = useIssuer({ command: 'dev', config: 'mcp-conformance' })

  it('passes the metadata and authorization code grant scenarios', async () => {
    const run = await runConformance({
      issuerUrl: issuer.url,
      clientId: CLIENT,
      resource: RESOURCE,
      browse: signIn('alice', 'alice-password'),
    })
    expect(run.exitCode, run.output).toBe(0)
    // Its other check, client_id_metadata_document_supported, is a warning until the tenant
    // accepts client ID metadata documents.
    expect(statuses(run, 'authorization-server-metadata-endpoint')).toEqual([
      'authorization-server-metadata: SUCCESS',
      expect.stringMatching(/^authorization-server-metadata-cimd: /),
    ])
    expect(statuses(run, 'authorization-code-grant')).toEqual(['authorization-code-grant: SUCCESS'])
  })
})
