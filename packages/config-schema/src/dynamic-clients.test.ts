import { describe, expect, it } from 'vitest'
import { parseConfig } from './parse-config.js'
import { JWT_SECRET } from './test-utils/config-files.js'

const FILE = 'tenants/acme.yaml'

function parse(dynamicClients: unknown, env: Record<string, string> = {}) {
  const value = {
    name: 'acme',
    config: {
      hosts: ['acme.localhost'],
      providers: ['users.provider.mjs'],
      clients: [],
      dynamic_clients: dynamicClients,
    },
  }
  return parseConfig([{ file: FILE, value }], {
    env,
    jwtSecret: JWT_SECRET,
    fileExists: () => true,
  })
}

function problems(dynamicClients: unknown, env: Record<string, string> = {}): string[] {
  const result = parse(dynamicClients, env)
  if (result.ok) throw new Error('expected issues')
  return result.issues.map((issue) => `${issue.path}: ${issue.message}`)
}

describe('tenant dynamic_clients', () => {
  it('normalises the section, with the defaults and a token read from the environment', () => {
    const result = parse(
      { registration: true, registration_token: { env: 'REG' }, scopes: ['tools:read'] },
      { REG: 'r'.repeat(20) },
    )
    if (!result.ok) throw new Error(JSON.stringify(result.issues))
    expect(result.tenants[0]?.dynamicClients).toEqual({
      registration: true,
      metadataDocuments: false,
      scopes: ['tools:read'],
      maxRegistrations: 10_000,
      registrationToken: 'r'.repeat(20),
    })
  })

  it('leaves the tenant without dynamic clients when both switches are off', () => {
    const result = parse({ scopes: ['a'] })
    if (!result.ok) throw new Error(JSON.stringify(result.issues))
    expect(result.tenants[0]).not.toHaveProperty('dynamicClients')
  })

  it('refuses missing scopes, a short token, a bad bound and an unknown field', () => {
    expect(problems({ metadata_documents: true })).toEqual([
      'config.dynamic_clients.scopes: scopes is required when registration or metadata_documents is on',
    ])
    expect(problems({ registration: true, registration_token: 'short', scopes: ['a'] })).toEqual([
      'config.dynamic_clients.registration_token: must be at least 16 characters',
    ])
    expect(problems({ registration: true, scopes: ['a'], max_registrations: 0 })).toEqual([
      'config.dynamic_clients.max_registrations: must be at least 1',
    ])
    expect(problems({ registration: 'yes', scopes: ['a'] })).toEqual([
      'config.dynamic_clients.registration: must be true or false',
    ])
    expect(problems({ registration: true, scopes: ['a'], register: true })[0]).toMatch(
      /^config\.dynamic_clients\.register: unknown field; expected one of registration, /,
    )
  })

  it('reports an unset environment variable for the token', () => {
    expect(
      problems({ registration: true, registration_token: { env: 'NOPE' }, scopes: ['a'] }),
    ).toEqual(['config.dynamic_clients.registration_token: environment variable NOPE is not set'])
  })
})
