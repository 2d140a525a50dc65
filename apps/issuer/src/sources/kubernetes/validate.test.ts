import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from '@tessera/config-schema'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServedClaims } from '../reconcile/claims.js'
import type { ServedClaims } from '../reconcile/claims.js'
import type { Resource } from './resources.js'
import { checkProviderDirectory, validateTenantResource } from './validate.js'
import type { ValidationContext } from './validate.js'

const SECRET = 'validate-test-secret-0123456789-abcdef'
const CLIENT = '0aaaaaaa-0000-4000-8000-000000000001'
const OTHER_CLIENT = '0bbbbbbb-0000-4000-8000-000000000002'
const INITECH_CLIENT = '0ccccccc-0000-4000-8000-000000000003'

let root: string
let context: ValidationContext

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-validate-'))
  const providerDirectory = join(root, 'providers')
  mkdirSync(join(providerDirectory, 'nested'), { recursive: true })
  writeFileSync(
    join(providerDirectory, 'users.mjs'),
    'export default { authenticate: () => null }\n',
  )
  writeFileSync(join(providerDirectory, 'nested', 'more.mjs'), 'export default {}\n')
  writeFileSync(join(root, 'outside.mjs'), 'export default {}\n')
  context = { providerDirectory, env: { CLIENT_SECRET: 'from-the-environment' }, jwtSecret: SECRET }
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

function resource(name: string, spec: unknown, metadata: Record<string, unknown> = {}): Resource {
  return {
    apiVersion: 'tessera.dev/v1',
    kind: 'Tenant',
    metadata: { name, resourceVersion: '7', ...metadata },
    spec,
  }
}

function spec(hosts: string[], overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    hosts,
    providers: ['users.mjs'],
    clients: [
      { client_id: CLIENT, client_secret: 'client-secret-long', grant_types: ['password'] },
    ],
    ...overrides,
  }
}

const file = (name: string) => `kubernetes:tenants/${name}`

/** No tenant served. */
const none = (): ServedClaims => createServedClaims(context.jwtSecret)

/** Claims of served tenants, as the tenant set keeps them: `name` is served at `hosts`. */
function served(
  name: string,
  hosts: string[],
  { clientId = OTHER_CLIENT, claims = none(), overrides = {} } = {},
): ServedClaims {
  const checked = validateTenantResource(
    file(name),
    resource(
      name,
      spec(hosts, {
        clients: [
          { client_id: clientId, client_secret: 's'.repeat(16), grant_types: ['password'] },
        ],
        ...overrides,
      }),
    ),
    claims,
    context,
  )
  if (!checked.ok) throw new Error(checked.issues.join('\n'))
  claims.serve(name, checked.unit)
  return claims
}

describe('validateTenantResource', () => {
  it('accepts a valid resource, with its provider paths made absolute under the directory', () => {
    const checked = validateTenantResource(
      file('acme'),
      resource('acme', spec(['Acme.Test'], { providers: ['users.mjs', 'nested/more.mjs'] })),
      none(),
      context,
    )
    expect(checked.ok).toBe(true)
    if (!checked.ok) return
    expect(checked.tenant.name).toBe('acme')
    expect(checked.tenant.hosts).toEqual(['acme.test'])
    expect(checked.tenant.providers).toEqual([
      join(context.providerDirectory, 'users.mjs'),
      join(context.providerDirectory, 'nested', 'more.mjs'),
    ])
    expect(checked.unit.file).toBe(file('acme'))
  })

  it('refuses provider paths that are absolute or lead out of the directory, once each', () => {
    const checked = validateTenantResource(
      file('initech'),
      resource(
        'initech',
        spec(['initech.test'], {
          providers: ['../outside.mjs', join(root, 'outside.mjs'), 'nested/../../outside.mjs', '.'],
        }),
      ),
      none(),
      context,
    )
    expect(checked).toEqual({
      ok: false,
      issues: [0, 1, 2, 3].map(
        (index) =>
          `${file('initech')}: spec.providers.${index}: must be a relative path inside the provider directory (TESSERA_CONFIG)`,
      ),
    })
  })

  it('reports a script missing from the directory, naming the resource without a line number', () => {
    const checked = validateTenantResource(
      file('acme'),
      resource('acme', spec(['acme.test'], { providers: ['missing.mjs'] })),
      none(),
      context,
    )
    expect(checked.ok).toBe(false)
    if (checked.ok) return
    expect(checked.issues).toHaveLength(1)
    expect(checked.issues[0]).toMatch(/^kubernetes:tenants\/acme: spec\.providers\.0: /)
    expect(checked.issues[0]).not.toContain(':0:')
  })

  it('keeps post_logout_redirect_uris of an openid client, and refuses them without openid', () => {
    const client = {
      client_id: CLIENT,
      redirect_uris: ['https://app.acme.test/callback'],
      post_logout_redirect_uris: ['https://app.acme.test/signed-out?from=idp'],
    }
    const accepted = validateTenantResource(
      file('acme'),
      resource('acme', spec(['acme.test'], { clients: [{ ...client, scopes: ['openid'] }] })),
      none(),
      context,
    )
    expect(accepted.ok && accepted.tenant.clients[0]?.postLogoutRedirectUris).toEqual([
      'https://app.acme.test/signed-out?from=idp',
    ])
    const refused = validateTenantResource(
      file('acme'),
      resource('acme', spec(['acme.test'], { clients: [{ ...client, scopes: ['profile'] }] })),
      none(),
      context,
    )
    expect(refused.ok ? [] : refused.issues).toEqual([
      'kubernetes:tenants/acme: spec.clients.0.post_logout_redirect_uris: post_logout_redirect_uris needs openid in scopes',
    ])
  })

  it('reports a host or client_id that a served tenant holds on this resource, not on the other', () => {
    const others = served('globex', ['globex.test', 'shared.test'])
    const clash = validateTenantResource(
      file('acme'),
      resource('acme', spec(['acme.test', 'SHARED.test:8443'])),
      others,
      context,
    )
    expect(clash.ok).toBe(false)
    if (clash.ok) return
    expect(clash.issues.join('\n')).toContain('shared.test')
    expect(clash.issues.every((line) => line.startsWith(file('acme')))).toBe(true)

    const sameClient = validateTenantResource(
      file('acme'),
      resource(
        'acme',
        spec(['acme.test'], {
          clients: [
            { client_id: OTHER_CLIENT, client_secret: 's'.repeat(16), grant_types: ['password'] },
          ],
        }),
      ),
      others,
      context,
    )
    expect(sameClient.ok).toBe(false)
    if (sameClient.ok) return
    expect(sameClient.issues.join('\n')).toContain(OTHER_CLIENT)
  })

  it('does not look for the scripts of the tenants served: they were checked when accepted', () => {
    const script = join(context.providerDirectory, 'deleted-since.mjs')
    writeFileSync(script, 'export default {}\n')
    const others = served('globex', ['globex.test'], {
      overrides: { providers: ['deleted-since.mjs'] },
    })
    // The script went away after globex was accepted; acme is not to blame for it.
    rmSync(script)
    const checked = validateTenantResource(
      file('acme'),
      resource('acme', spec(['acme.test'])),
      others,
      context,
    )
    expect(checked.ok).toBe(true)
  })

  it('refuses hostile shapes with problems, never an exception', () => {
    const shapes: unknown[] = [
      'a string',
      null,
      42,
      [],
      { hosts: 'acme.test', providers: 'users.mjs', clients: {} },
      { hosts: ['acme.test'], providers: [7, ''], clients: [] },
      { hosts: ['a b.test'], providers: ['users.mjs'], clients: [], extra: true },
      { hosts: ['acme.test'], providers: ['users.mjs'], clients: [{ client_id: 'not-a-uuid' }] },
      JSON.parse(
        '{"hosts":["acme.test"],"providers":["users.mjs"],"clients":[],"__proto__":{"polluted":true}}',
      ),
    ]
    for (const shape of shapes) {
      const checked = validateTenantResource(file('acme'), resource('acme', shape), none(), context)
      expect(checked.ok, JSON.stringify(shape)).toBe(false)
      if (checked.ok) continue
      expect(checked.issues.length).toBeGreaterThan(0)
      for (const line of checked.issues) expect(line.startsWith(file('acme'))).toBe(true)
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('resolves {env: VAR} secrets and names a missing variable without a value', () => {
    const ok = validateTenantResource(
      file('acme'),
      resource(
        'acme',
        spec(['acme.test'], {
          clients: [
            {
              client_id: CLIENT,
              client_secret: { env: 'CLIENT_SECRET' },
              grant_types: ['password'],
            },
          ],
        }),
      ),
      none(),
      context,
    )
    expect(ok.ok).toBe(true)
    const missing = validateTenantResource(
      file('acme'),
      resource(
        'acme',
        spec(['acme.test'], {
          clients: [
            {
              client_id: CLIENT,
              client_secret: { env: 'NOT_SET_ANYWHERE' },
              grant_types: ['password'],
            },
          ],
        }),
      ),
      none(),
      context,
    )
    expect(missing.ok).toBe(false)
    if (missing.ok) return
    expect(missing.issues.join('\n')).toContain('NOT_SET_ANYWHERE')
    expect(missing.issues.join('\n')).not.toContain('from-the-environment')
  })

  it('leaves the resource it was given untouched', () => {
    const object = resource('acme', spec(['acme.test']))
    const before = structuredClone(object)
    validateTenantResource(file('acme'), object, none(), context)
    expect(object).toEqual(before)
  })
})

describe('createServedClaims', () => {
  const check = (claims: ServedClaims, name: string, hosts: string[], clientId = CLIENT) =>
    validateTenantResource(
      file(name),
      resource(
        name,
        spec(hosts, {
          clients: [
            { client_id: clientId, client_secret: 's'.repeat(16), grant_types: ['password'] },
          ],
        }),
      ),
      claims,
      context,
    )

  it("checks a served tenant's next version against the others only, without claiming anything", () => {
    const claims = served('globex', ['globex.test', 'shared.test'])
    // globex's own next version keeps its hosts and client_id: no clash with itself.
    expect(check(claims, 'globex', ['shared.test'], OTHER_CLIENT).ok).toBe(true)
    // Checked, not served: globex.test is still globex's.
    const refused = check(claims, 'acme', ['globex.test'])
    expect(refused.ok ? [] : refused.issues).toEqual([
      'kubernetes:tenants/acme: spec.hosts.0: host "globex.test" is also used by tenant "globex" (kubernetes:tenants/globex)',
    ])
    // A refused resource claims nothing: its other host stays free.
    const clash = check(claims, 'acme', ['acme.test', 'shared.test'])
    expect(clash.ok).toBe(false)
    expect(check(claims, 'initech', ['acme.test'], INITECH_CLIENT).ok).toBe(true)
  })

  it('serves a new version in place of the old one, and frees what a forgotten tenant held', () => {
    const claims = served('globex', ['globex.test'])
    const moved = check(claims, 'globex', ['moved.test'], OTHER_CLIENT)
    if (!moved.ok) throw new Error(moved.issues.join('\n'))
    claims.serve('globex', moved.unit)
    expect(claims.get('globex')).toBe(moved.unit)
    expect(check(claims, 'acme', ['globex.test']).ok).toBe(true)
    expect(check(claims, 'acme', ['moved.test']).ok).toBe(false)
    claims.forget('globex')
    expect(claims.get('globex')).toBeUndefined()
    expect(check(claims, 'acme', ['moved.test'], OTHER_CLIENT).ok).toBe(true)
  })
})

describe('checkProviderDirectory', () => {
  it('accepts a directory and refuses a file or a missing path as a ConfigError on TESSERA_CONFIG', () => {
    expect(() => checkProviderDirectory(context.providerDirectory)).not.toThrow()
    for (const path of [join(root, 'outside.mjs'), join(root, 'nowhere')]) {
      let thrown: unknown
      try {
        checkProviderDirectory(path)
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(ConfigError)
      expect((thrown as ConfigError).issues).toEqual([
        expect.objectContaining({ file: 'environment', path: 'TESSERA_CONFIG' }),
      ])
      expect((thrown as ConfigError).issues[0]!.message).toContain(path)
    }
  })
})
