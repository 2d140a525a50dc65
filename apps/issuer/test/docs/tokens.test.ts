import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseConfig } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { FIXTURES, JWT_SECRET } from '../support/issuer.js'

const DOC = fileURLToPath(new URL('../../../../docs/tokens.md', import.meta.url))

describe('docs/tokens.md', () => {
  it('shows a client configuration that the schema takes, with introspection: tenant', () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'))?.[1]
    if (block === undefined) throw new Error('no yaml block in docs/tokens.md')
    const { clients } = parse(block) as { clients: unknown[] }
    const result = parseConfig(
      [
        {
          file: DOC,
          value: {
            name: 'docs',
            config: {
              hosts: ['docs.test'],
              providers: [join(FIXTURES, 'basic', 'providers', 'users.mjs')],
              clients,
            },
          },
        },
      ],
      { env: { ORDERS_API_SECRET: 'a-secret' }, jwtSecret: JWT_SECRET },
    )
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    expect(result.tenants[0]?.clients[0]).toMatchObject({
      clientSecret: 'a-secret',
      introspection: 'tenant',
    })
  })
})
