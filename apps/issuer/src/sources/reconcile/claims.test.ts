import { parseConfigDocument } from '@tessera/config-schema'
import type { ConfigFile } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { createServedClaims } from './claims.js'

const SECRET = 'claims-test-secret-0123456789-abcdef'

/** Tenant `name` at `hosts`, with client_id number `id`, as one checked resource. */
function unit(name: string, hosts: readonly string[], id: number): ConfigFile {
  const value = {
    name,
    config: {
      hosts,
      providers: ['users.mjs'],
      clients: [
        {
          client_id: `${id.toString(16).padStart(8, '0')}-0000-4000-8000-000000000001`,
          client_secret: 's'.repeat(16),
          grant_types: ['password'],
        },
      ],
    },
  }
  return parseConfigDocument(
    { file: `kubernetes:tenants/${name}`, value },
    { env: {}, jwtSecret: SECRET, fileExists: () => true },
  )
}

describe('createServedClaims', () => {
  it('counts the claims given up: a tenant forgotten or served in place, never a check', () => {
    const claims = createServedClaims(SECRET)
    claims.serve('a', unit('a', ['a.test'], 1))
    expect(claims.releases()).toBe(0)
    expect(claims.check('b', unit('b', ['a.test'], 2)).map((issue) => issue.message)).toEqual([
      'host "a.test" is also used by tenant "a" (kubernetes:tenants/a:1)',
    ])
    expect(claims.check('a', unit('a', ['moved.test'], 1))).toEqual([])
    expect(claims.releases()).toBe(0)

    claims.serve('a', unit('a', ['moved.test'], 1))
    expect(claims.releases()).toBe(1)
    expect(claims.check('b', unit('b', ['a.test'], 2))).toEqual([])
    claims.forget('a')
    claims.forget('a')
    expect(claims.releases()).toBe(2)
    expect(claims.get('a')).toBeUndefined()
  })
})
