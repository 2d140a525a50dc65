import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { codeBlocks, parseDocClients } from '../support/docs.js'

const DOC = fileURLToPath(new URL('../../../../docs/tokens.md', import.meta.url))
const REPO = fileURLToPath(new URL('../../../../', import.meta.url))

describe('docs/tokens.md', () => {
  it('shows a client configuration that the schema takes, with introspection: tenant', () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'))?.[1]
    if (block === undefined) throw new Error('no yaml block in docs/tokens.md')
    const { clients } = parse(block) as { clients: unknown[] }
    const result = parseDocClients(DOC, clients, { ORDERS_API_SECRET: 'a-client-secret-value' })
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    expect(result.tenants[0]?.clients[0]).toMatchObject({
      clientSecret: 'a-client-secret-value',
      introspection: 'tenant',
    })
  })

  it('shows a client_credentials client that the schema takes', () => {
    const block = codeBlocks(readFileSync(DOC, 'utf8'), 'yaml').find((text) =>
      text.includes('client_credentials'),
    )
    if (block === undefined) throw new Error('no client_credentials yaml block in docs/tokens.md')
    const { clients } = parse(block) as { clients: unknown[] }
    const result = parseDocClients(DOC, clients, { ORDER_SYNC_SECRET: 'a-client-secret-value' })
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    expect(result.tenants[0]?.clients[0]).toMatchObject({ grantTypes: ['client_credentials'] })
  })

  it('names, in the curl examples of the grant, an example client that has it', () => {
    const examples = readFileSync(join(REPO, 'examples', 'acme', 'tenant.yaml'), 'utf8')
    const { config } = parse(examples) as {
      config: { clients: { client_id: string; client_secret?: string; grant_types?: string[] }[] }
    }
    for (const file of ['docs/tokens.md', 'README.md']) {
      const text = readFileSync(join(REPO, file), 'utf8')
      const credentials = [
        ...text.matchAll(/-u ([0-9a-f-]{36}):(\S+) \\?\s*-d grant_type=client_credentials/g),
      ]
      expect(credentials.length, file).toBeGreaterThan(0)
      for (const [, id, secret] of credentials) {
        expect(config.clients, `${file}: ${id}`).toContainEqual(
          expect.objectContaining({
            client_id: id,
            client_secret: secret,
            grant_types: ['client_credentials'],
          }),
        )
      }
    }
  })
})
