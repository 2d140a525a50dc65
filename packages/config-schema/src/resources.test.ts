import { describe, expect, it } from 'vitest'
import { parseConfig } from './parse-config.js'
import { JWT_SECRET } from './test-utils/config-files.js'

const FILE = 'tenants/acme.yaml'

function tenant(resources: unknown) {
  return {
    name: 'acme',
    config: {
      hosts: ['acme.localhost'],
      providers: ['users.provider.mjs'],
      clients: [],
      resources,
    },
  }
}

function parse(resources: unknown) {
  return parseConfig([{ file: FILE, value: tenant(resources) }], {
    env: {},
    jwtSecret: JWT_SECRET,
    fileExists: () => true,
  })
}

function problems(resources: unknown): string[] {
  const result = parse(resources)
  if (result.ok) throw new Error('expected issues')
  return result.issues.map((issue) => `${issue.path}: ${issue.message}`)
}

describe('tenant resources', () => {
  it('keeps each uri as written, with its scopes when listed', () => {
    const result = parse([
      { uri: 'https://MCP.acme.test/mcp', scopes: ['tools:read', 'tools:call'] },
      { uri: 'urn:acme:billing' },
    ])
    if (!result.ok) throw new Error('expected a tenant')
    expect(result.tenants[0]?.resources).toEqual([
      { uri: 'https://MCP.acme.test/mcp', scopes: ['tools:read', 'tools:call'] },
      { uri: 'urn:acme:billing' },
    ])
  })

  it('leaves resources out when none are listed', () => {
    const result = parse([])
    if (!result.ok) throw new Error('expected a tenant')
    expect(result.tenants[0]).not.toHaveProperty('resources')
  })

  it('refuses a relative uri, a fragment, a bad scope and an unknown field', () => {
    expect(
      problems([
        { uri: '/mcp' },
        { uri: 'https://api.acme.test/#x' },
        { uri: 'https://b.acme.test', scopes: ['a b'] },
        { uri: 'https://c.acme.test', scope: ['a'] },
      ]),
    ).toEqual([
      'config.resources.0.uri: must be an absolute URI',
      'config.resources.1.uri: must not contain a fragment (#)',
      'config.resources.2.scopes.0: must be a scope token: printable ASCII without spaces, " or \\',
      'config.resources.3.scope: unknown field; expected one of uri, scopes',
    ])
  })

  it('refuses two uris that are the same once scheme, host and default port are normalised', () => {
    expect(
      problems([{ uri: 'https://api.acme.test/mcp' }, { uri: 'HTTPS://API.acme.test:443/mcp' }]),
    ).toEqual([
      'config.resources.1.uri: duplicate resource "HTTPS://API.acme.test:443/mcp" (the same as "https://api.acme.test/mcp")',
    ])
  })
})
