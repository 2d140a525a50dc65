import { mkdir, symlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from './load-config.js'
import type { Tenant } from './model.js'
import {
  createTempFolder,
  fixture,
  JWT_SECRET,
  loadIssues,
  OPTIONS,
} from './test-utils/config-files.js'

const PROVIDER = `export default { authenticate: async () => null }\n`

let temp: Awaited<ReturnType<typeof createTempFolder>>
beforeAll(async () => {
  temp = await createTempFolder()
})
afterAll(async () => {
  await temp.remove()
})

/** A file-form tenant whose provider script sits next to it. */
function tenantYaml(name: string, host: string, extra = ''): string {
  return `name: ${name}\nconfig:\n  hosts: [${host}]\n  providers: [users.provider.mjs]\n  clients: []\n${extra}`
}

describe('loadConfig', () => {
  describe('reading', () => {
    it('reads the file form and the resource form into the same tenant', async () => {
      const env = { ACME_WEB_SECRET: 'web-secret-012345' }
      const [fromFile] = await loadConfig(fixture('forms', 'file-form.yaml'), { ...OPTIONS, env })
      const [fromResource] = await loadConfig(fixture('forms', 'resource-form.yaml'), {
        ...OPTIONS,
        env,
      })
      const expected: Omit<Tenant, 'source'> = {
        name: 'acme',
        hosts: ['acme.localhost', 'acme.example.com:8443'],
        jwtAlgorithm: 'RS256',
        providers: [resolve(fixture('forms', 'users.provider.mjs'))],
        audience: 'https://api.acme.test',
        clients: [
          {
            clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
            clientSecret: 'web-secret-012345',
            grantTypes: ['authorization_code', 'refresh_token'],
            redirectUris: ['http://localhost:8081/callback'],
            postLogoutRedirectUris: ['http://localhost:8081/signed-out'],
            scopes: ['openid', 'orders:read', 'orders:write'],
            introspection: 'tenant',
          },
          {
            clientId: '2f1e6b4c-3d2a-4c1b-8a9f-0e7d6c5b4a39',
            grantTypes: ['password'],
            redirectUris: [],
            postLogoutRedirectUris: [],
            scopes: ['orders:read'],
            introspection: 'own',
          },
        ],
      }
      expect(fromFile).toEqual({
        ...expected,
        source: { file: fixture('forms', 'file-form.yaml'), line: 2 },
      })
      expect(fromResource).toEqual({
        ...expected,
        source: { file: fixture('forms', 'resource-form.yaml'), line: 2 },
      })
    })

    it('reads every document of a file, skipping empty ones', async () => {
      const file = fixture('multi', 'tenants.yaml')
      const tenants = await loadConfig(file, {
        ...OPTIONS,
        env: { ALPHA_JWT_SECRET: 'a'.repeat(32) },
      })
      expect(tenants.map(({ name, source, jwtSecret }) => ({ name, source, jwtSecret }))).toEqual([
        { name: 'alpha', source: { file, line: 2 }, jwtSecret: 'a'.repeat(32) },
        { name: 'beta', source: { file, line: 11 }, jwtSecret: undefined },
        { name: 'gamma', source: { file, line: 23 }, jwtSecret: undefined },
      ])
      expect(tenants[1]?.providers).toEqual([resolve(fixture('forms', 'users.provider.mjs'))])
    })

    it('searches a directory recursively, in sorted order, skipping hidden entries', async () => {
      const root = fixture('tree')
      const tenants = await loadConfig(root, OPTIONS)
      expect(tenants.map((tenant) => [tenant.name, tenant.source.file])).toEqual([
        ['first', join(root, '01-first.yml')],
        ['second', join(root, '10-second.yaml')],
        ['third', join(root, 'nested', 'deeper', 'third.yaml')],
      ])
      expect(tenants[2]?.providers).toEqual([resolve(root, 'users.provider.mjs')])
    })

    it('follows symbolic links, visiting each directory once', async () => {
      const folder = await temp.write({
        'real/acme.yaml': tenantYaml('acme', 'acme.localhost'),
        'real/users.provider.mjs': PROVIDER,
      })
      await symlink(join(folder, 'real'), join(folder, 'linked'))
      const tenants = await loadConfig(folder, OPTIONS)
      // `linked` sorts before `real`: the folder is read through the link, and only once.
      expect(tenants.map((tenant) => tenant.source.file)).toEqual([
        join(folder, 'linked', 'acme.yaml'),
      ])
    })

    it('skips folders named node_modules, where an app kept beside the tenants has its packages', async () => {
      const folder = await temp.write({
        'acme.yaml': tenantYaml('acme', 'acme.localhost'),
        'users.provider.mjs': PROVIDER,
        'app/node_modules/some-package/config.yaml': 'not: [a tenant',
        'app/tenants/beta.yaml': tenantYaml('beta', 'beta.localhost'),
        'app/tenants/users.provider.mjs': PROVIDER,
      })
      const tenants = await loadConfig(folder, OPTIONS)
      expect(tenants.map((tenant) => tenant.source.file)).toEqual([
        join(folder, 'acme.yaml'),
        join(folder, 'app', 'tenants', 'beta.yaml'),
      ])
    })

    it('shows file names as the given path joined with the file inside it', async () => {
      expect(await loadIssues(fixture('invalid-client'))).toEqual([
        `${fixture('invalid-client', 'hs256', 'tenant.yaml')}:7: config.clients.0.client_id: must be a UUID`,
      ])
    })

    it('resolves {env: VAR} secrets from the given environment', async () => {
      const folder = await temp.write({
        'acme.yaml': `
          name: acme
          config:
            jwt_secret: { env: ACME_JWT_SECRET }
            hosts: [acme.localhost]
            providers: [users.provider.mjs]
            clients: []
        `,
        'users.provider.mjs': PROVIDER,
      })
      const secret = 's'.repeat(48)
      const [acme] = await loadConfig(folder, {
        env: { ACME_JWT_SECRET: secret },
        jwtSecret: undefined,
      })
      expect(acme?.jwtSecret).toBe(secret)
      expect(await loadIssues(folder, { env: {}, jwtSecret: undefined })).toEqual([
        `${join(folder, 'acme.yaml')}:3: config.jwt_secret: environment variable ACME_JWT_SECRET is not set`,
      ])
    })
  })

  describe('problems', () => {
    it('reports three problems of one file as three issues, each at its line', async () => {
      const file = fixture('three-problems', 'tenant.yaml')
      expect(await loadIssues(fixture('three-problems'))).toEqual([
        `${file}:4: config.hosts.1: must be a host name (letters, digits, hyphens and dots, or an [IPv6] literal), optionally with :port`,
        `${file}:5: config.jwt_algoritm: unknown field; expected one of hosts, jwt_algorithm, providers, audience, jwt_secret, clients, resources, dynamic_clients, dpop_nonce`,
        `${file}:10: config.clients.0.scopes.2: duplicate scope "orders:read"`,
      ])
    })

    it('reports YAML syntax errors at their line, with the problems of other files', async () => {
      const folder = await temp.write({
        'a-broken.yaml': `
          name: broken
          config:
            hosts: [broken.localhost
            providers: [users.provider.mjs]
        `,
        'b-duplicate-keys.yaml': `
          name: dup
          name: dup
        `,
        'c-fine-but-wrong.yaml': `
          name: Wrong
        `,
      })
      expect(await loadIssues(folder)).toEqual([
        // The parser notices the unclosed `[` on the next line, and reports it there.
        `${join(folder, 'a-broken.yaml')}:4: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]`,
        `${join(folder, 'b-duplicate-keys.yaml')}:2: invalid YAML: Map keys must be unique`,
        `${join(folder, 'c-fine-but-wrong.yaml')}:1: name: must be lower-case letters, digits and hyphens, starting and ending with a letter or digit`,
        `${join(folder, 'c-fine-but-wrong.yaml')}:1: config: is required`,
      ])
    })

    it('reports a missing provider script at its line', async () => {
      const folder = await temp.write({
        'acme.yaml': `
          name: acme
          config:
            hosts: [acme.localhost]
            providers:
              - users.provider.mjs
              - scripts/ldap.provider.mjs
            clients: []
        `,
        'users.provider.mjs': PROVIDER,
      })
      expect(await loadIssues(folder)).toEqual([
        `${join(folder, 'acme.yaml')}:6: config.providers.1: provider script not found: ${join(folder, 'scripts', 'ldap.provider.mjs')}`,
      ])
    })

    it('puts a missing field on the line of the mapping that lacks it', async () => {
      const folder = await temp.write({
        'acme.yaml': `
          # The client below has no redirect_uris.
          name: acme
          config:
            hosts: [acme.localhost]
            providers: [users.provider.mjs]
            clients:
              - client_id: 7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11
                scopes: [orders:read]
        `,
        'users.provider.mjs': PROVIDER,
      })
      expect(await loadIssues(folder)).toEqual([
        `${join(folder, 'acme.yaml')}:7: config.clients.0.redirect_uris: must list at least one URL when grant_types includes authorization_code`,
      ])
    })

    it('uses spec paths for the resource form', async () => {
      const folder = await temp.write({
        'acme.yaml': `
          apiVersion: tessera.dev/v1
          kind: Tenant
          metadata:
            name: acme
            labels: { team: a }
          spec:
            hosts: [acme.localhost]
            providers: [users.provider.mjs]
            clients:
              - client_id: 7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b1
                grant_types: [password, implicit]
        `,
        'users.provider.mjs': PROVIDER,
      })
      const file = join(folder, 'acme.yaml')
      expect(await loadIssues(folder)).toEqual([
        `${file}:10: spec.clients.0.client_id: must be a UUID`,
        `${file}:11: spec.clients.0.grant_types.1: unknown grant type "implicit"; expected one of authorization_code, refresh_token, password, client_credentials`,
      ])
    })

    it('refuses a host, a name or a client_id that another file already uses', async () => {
      const folder = await temp.write({
        'acme.yaml': `
          name: acme
          config:
            hosts:
              - acme.localhost
              - shared.localhost:3000
            providers: [users.provider.mjs]
            clients:
              - client_id: 7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11
                grant_types: [password]
        `,
        'other/acme-again.yaml': `
          name: acme
          config:
            hosts: [Shared.localhost]
            providers: [../users.provider.mjs]
            clients:
              - client_id: 7C6F2D0E-1B7A-4F7E-9D55-5D0A7F3E2B11
                grant_types: [password]
        `,
        'users.provider.mjs': PROVIDER,
      })
      const first = join(folder, 'acme.yaml')
      const second = join(folder, 'other', 'acme-again.yaml')
      expect(await loadIssues(folder)).toEqual([
        `${second}:1: name: duplicate tenant name "acme" (also defined at ${first}:1)`,
        `${second}:3: config.hosts.0: host "shared.localhost" is also used by tenant "acme" (${first}:5)`,
        `${second}:6: config.clients.0.client_id: client_id "7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11" is also used by tenant "acme" (${first}:8)`,
      ])
    })

    it('refuses HS256 tenants when JWT_SECRET is unset or short', async () => {
      const folder = await temp.write({
        'tenants.yaml': `
          name: implicit
          config:
            hosts: [implicit.localhost]
            providers: [users.provider.mjs]
            clients: []
          ---
          name: explicit
          config:
            hosts: [explicit.localhost]
            jwt_algorithm: HS256
            providers: [users.provider.mjs]
            clients: []
        `,
        'users.provider.mjs': PROVIDER,
      })
      const file = join(folder, 'tenants.yaml')
      expect(await loadIssues(folder, { env: {}, jwtSecret: undefined })).toEqual([
        `${file}:1: tenant "implicit" uses HS256: JWT_SECRET is not set`,
        `${file}:10: config.jwt_algorithm: tenant "explicit" uses HS256: JWT_SECRET is not set`,
      ])
      expect(await loadIssues(folder, { env: {}, jwtSecret: JWT_SECRET.slice(1) })).toEqual([
        `${file}:1: tenant "implicit" uses HS256: JWT_SECRET must be at least 32 characters`,
        `${file}:10: config.jwt_algorithm: tenant "explicit" uses HS256: JWT_SECRET must be at least 32 characters`,
      ])
    })

    it('refuses a document that is not a mapping', async () => {
      const folder = await temp.write({ 'list.yaml': '\n# a list\n- name: acme\n' })
      expect(await loadIssues(folder)).toEqual([
        `${join(folder, 'list.yaml')}:2: must be a mapping: a tenant (name, config) or a kind: Tenant resource`,
      ])
    })

    it('refuses a missing path', async () => {
      expect(await loadIssues(fixture('no-such-folder'))).toEqual([
        `${fixture('no-such-folder')}: no such file or directory`,
      ])
    })

    it('refuses a directory without any tenant', async () => {
      const empty = await temp.write({})
      await mkdir(join(empty, 'sub'))
      expect(await loadIssues(empty)).toEqual([
        `${empty}: no tenant found (searched for *.yaml and *.yml files)`,
      ])
      const onlyEmpty = await temp.write({ 'empty.yaml': '# nothing\n---\n', 'other.yml': '' })
      expect(await loadIssues(onlyEmpty)).toEqual([
        `${onlyEmpty}: no tenant found (searched for *.yaml and *.yml files)`,
      ])
      const file = join(onlyEmpty, 'empty.yaml')
      expect(await loadIssues(file)).toEqual([`${file}: no tenant found`])
    })

    it('reads a single file given directly', async () => {
      const folder = await temp.write({
        'acme.yml': tenantYaml('acme', 'acme.localhost'),
        'users.provider.mjs': PROVIDER,
      })
      const tenants = await loadConfig(join(folder, 'acme.yml'), OPTIONS)
      expect(tenants.map((tenant) => tenant.name)).toEqual(['acme'])
    })
  })
})
