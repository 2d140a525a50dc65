import { describe, expect, it } from 'vitest'
import { parseConfig } from './parse-config.js'
import { JWT_SECRET } from './test-utils/config-files.js'

const FILE = 'tenants/acme.yaml'
const CLIENT_ID = '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'

function parse(config: Record<string, unknown>, client: Record<string, unknown> = {}) {
  return parseConfig(
    [
      {
        file: FILE,
        value: {
          name: 'acme',
          config: {
            hosts: ['acme.localhost'],
            providers: ['users.provider.mjs'],
            clients: [{ client_id: CLIENT_ID, grant_types: ['password'], ...client }],
            ...config,
          },
        },
      },
    ],
    { env: {}, jwtSecret: JWT_SECRET, fileExists: () => true },
  )
}

describe('DPoP fields', () => {
  it('maps dpop_nonce and dpop_bound_access_tokens onto the model', () => {
    const result = parse({ dpop_nonce: true }, { dpop_bound_access_tokens: true })
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    expect(result.tenants[0]?.dpopNonce).toBe(true)
    expect(result.tenants[0]?.clients[0]?.dpopBoundAccessTokens).toBe(true)
  })

  it('leaves both out when absent or false', () => {
    for (const value of [undefined, false]) {
      const result = parse({ dpop_nonce: value }, { dpop_bound_access_tokens: value })
      if (!result.ok) throw new Error('expected a tenant')
      expect(result.tenants[0]).not.toHaveProperty('dpopNonce')
      expect(result.tenants[0]?.clients[0]).not.toHaveProperty('dpopBoundAccessTokens')
    }
  })

  it('refuses values that are not booleans', () => {
    const result = parse({ dpop_nonce: 'yes' }, { dpop_bound_access_tokens: 1 })
    if (result.ok) throw new Error('expected issues')
    expect(result.issues.map((issue) => issue.path).sort()).toEqual([
      'config.clients.0.dpop_bound_access_tokens',
      'config.dpop_nonce',
    ])
  })
})
