import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from './parse-config.js'
import { formatConfigIssue } from './model.js'
import type { ConfigDocument, ParseConfigOptions } from './parse-config.js'
import { JWT_SECRET } from './test-utils/config-files.js'

const CLIENT_ID = '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'
const OTHER_CLIENT_ID = '2f1e6b4c-3d2a-4c1b-8a9f-0e7d6c5b4a39'
const FILE = 'tenants/acme.yaml'

/** Options where every provider script exists and JWT_SECRET is valid. */
function options(overrides: Partial<ParseConfigOptions> = {}): ParseConfigOptions {
  return { env: {}, jwtSecret: JWT_SECRET, fileExists: () => true, ...overrides }
}

/** A valid file-form tenant, with `config` and its first client overridden. */
function tenant(config: Record<string, unknown> = {}, client: Record<string, unknown> = {}) {
  return {
    name: 'acme',
    config: {
      hosts: ['acme.localhost'],
      providers: ['users.provider.mjs'],
      clients: [
        { client_id: CLIENT_ID, redirect_uris: ['http://localhost:8081/callback'], ...client },
      ],
      ...config,
    },
  }
}

/** The issues of one document, as `path: message` (the file and line are tested elsewhere). */
function problems(value: unknown, overrides: Partial<ParseConfigOptions> = {}): string[] {
  const result = parseConfig([{ file: FILE, value }], options(overrides))
  if (result.ok) throw new Error('expected issues')
  return result.issues.map((issue) =>
    issue.path ? `${issue.path}: ${issue.message}` : issue.message,
  )
}

function parseOne(value: unknown, overrides: Partial<ParseConfigOptions> = {}) {
  const result = parseConfig([{ file: FILE, value }], options(overrides))
  if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
  const [only] = result.tenants
  if (!only) throw new Error('expected a tenant')
  return only
}

describe('parseConfig', () => {
  describe('normalisation', () => {
    it('applies the defaults and lower-cases hosts and client ids', () => {
      const parsed = parseOne(
        tenant({ hosts: ['Acme.LOCALHOST:3000'] }, { client_id: CLIENT_ID.toUpperCase() }),
      )
      expect(parsed).toEqual({
        name: 'acme',
        hosts: ['acme.localhost:3000'],
        jwtAlgorithm: 'HS256',
        providers: [resolve('tenants/users.provider.mjs')],
        clients: [
          {
            clientId: CLIENT_ID,
            grantTypes: ['authorization_code', 'refresh_token'],
            redirectUris: ['http://localhost:8081/callback'],
            postLogoutRedirectUris: [],
            scopes: [],
            introspection: 'own',
          },
        ],
        source: { file: FILE, line: 1 },
      })
    })

    it('keeps audience, secrets and the given lists', () => {
      const parsed = parseOne(
        tenant(
          { jwt_algorithm: 'RS256', audience: 'https://api.acme.test', jwt_secret: 'x'.repeat(32) },
          {
            client_secret: 's3cr3t-value-long',
            grant_types: ['password'],
            redirect_uris: [],
            scopes: ['orders:read', 'orders:write'],
          },
        ),
      )
      expect(parsed).toMatchObject({
        jwtAlgorithm: 'RS256',
        audience: 'https://api.acme.test',
        jwtSecret: 'x'.repeat(32),
        clients: [
          {
            clientSecret: 's3cr3t-value-long',
            grantTypes: ['password'],
            redirectUris: [],
            scopes: ['orders:read', 'orders:write'],
          },
        ],
      })
    })

    it('reads the resource form, whatever else metadata carries, into the same tenant', () => {
      const file = tenant({ hosts: ['acme.localhost'] })
      const resource = {
        apiVersion: 'tessera.dev/v1',
        kind: 'Tenant',
        metadata: { name: 'acme', namespace: 'tessera', labels: { a: 'b' }, uid: 'x' },
        spec: file.config,
        status: { observedGeneration: 1 },
      }
      expect(parseOne(resource)).toEqual(parseOne(file))
    })

    it('resolves provider paths against the folder of the file', () => {
      const parsed = parseOne(tenant({ providers: ['a.mjs', '../common/b.mjs', '/opt/c.mjs'] }))
      expect(parsed.providers).toEqual([
        resolve('tenants/a.mjs'),
        resolve('common/b.mjs'),
        '/opt/c.mjs',
      ])
    })

    it('takes the source line from locate', () => {
      const document: ConfigDocument = { file: FILE, value: tenant(), locate: () => 4 }
      const result = parseConfig([document], options())
      expect(result.ok && result.tenants[0]?.source).toEqual({ file: FILE, line: 4 })
    })
  })

  describe('{env: VAR} secrets', () => {
    const env = { ACME_JWT_SECRET: 'y'.repeat(40), ACME_WEB_SECRET: 'from-the-environment' }

    it('reads jwt_secret and client_secret from the environment', () => {
      const parsed = parseOne(
        tenant(
          { jwt_secret: { env: 'ACME_JWT_SECRET' } },
          { client_secret: { env: 'ACME_WEB_SECRET' } },
        ),
        { env },
      )
      expect(parsed.jwtSecret).toBe('y'.repeat(40))
      expect(parsed.clients[0]?.clientSecret).toBe('from-the-environment')
    })

    it('refuses a variable that is unset or empty', () => {
      expect(
        problems(tenant({ jwt_secret: { env: 'NOPE' } }, { client_secret: { env: 'EMPTY' } }), {
          env: { EMPTY: '' },
        }),
      ).toEqual([
        'config.jwt_secret: environment variable NOPE is not set',
        'config.clients.0.client_secret: environment variable EMPTY is not set',
      ])
    })

    it('refuses a jwt_secret variable shorter than 32 characters, without showing it', () => {
      const issues = problems(tenant({ jwt_secret: { env: 'SHORT' } }), {
        env: { SHORT: 'z'.repeat(31) },
      })
      expect(issues).toEqual([
        'config.jwt_secret: must be at least 32 characters (environment variable SHORT)',
      ])
    })

    it('refuses a malformed reference', () => {
      expect(
        problems(tenant({ jwt_secret: { env: 'not a name' } }, { client_secret: { var: 'X' } })),
      ).toEqual([
        'config.jwt_secret.env: must be an environment variable name',
        'config.clients.0.client_secret.env: is required',
        'config.clients.0.client_secret.var: unknown field; expected one of env',
      ])
      expect(problems(tenant({ jwt_secret: 42 }))).toEqual([
        'config.jwt_secret: must be a string or {env: VARIABLE_NAME}',
      ])
    })
  })

  describe('field rules', () => {
    it('wants a mapping', () => {
      expect(problems(['a list'])).toEqual([
        'must be a mapping: a tenant (name, config) or a kind: Tenant resource',
      ])
      expect(problems(null)).toHaveLength(1)
    })

    it('refuses unknown keys at every level, naming the known ones', () => {
      // Without a locate function every issue is on line 1, so they come in zod's order.
      expect(problems({ ...tenant({ clinets: [] }, { scope: [] }), extra: 1 })).toEqual([
        'config.clients.0.scope: unknown field; expected one of client_id, client_name, client_secret, grant_types, redirect_uris, post_logout_redirect_uris, scopes, introspection, allowed_origins, token_endpoint_auth_method, jwks, jwks_uri, dpop_bound_access_tokens',
        'config.clinets: unknown field; expected one of hosts, jwt_algorithm, providers, audience, jwt_secret, clients, resources, dynamic_clients, dpop_nonce',
        'extra: unknown field; expected one of name, config',
      ])
    })

    it('names what is missing', () => {
      expect(problems({ config: {} })).toEqual([
        'name: is required',
        'config.hosts: is required',
        'config.providers: is required',
        'config.clients: is required',
      ])
    })

    it('takes introspection own or tenant, and tenant only with a client_secret', () => {
      expect(
        parseOne(tenant({}, { client_secret: 's'.repeat(16), introspection: 'tenant' })).clients,
      ).toEqual([expect.objectContaining({ introspection: 'tenant' })])
      expect(parseOne(tenant({}, { introspection: 'own' })).clients).toEqual([
        expect.objectContaining({ introspection: 'own' }),
      ])
      expect(problems(tenant({}, { introspection: 'tenant' }))).toEqual([
        'config.clients.0.introspection: tenant needs a client_secret or private_key_jwt: a public client cannot introspect',
      ])
      expect(problems(tenant({}, { introspection: 'all' }))).toEqual([
        'config.clients.0.introspection: must be one of own, tenant',
      ])
      // Both problems at once: the secret rule does not hide the redirect_uris rule.
      expect(problems(tenant({}, { introspection: 'tenant', redirect_uris: [] }))).toEqual([
        'config.clients.0.redirect_uris: must list at least one URL when grant_types includes authorization_code',
        'config.clients.0.introspection: tenant needs a client_secret or private_key_jwt: a public client cannot introspect',
      ])
    })

    it.each([
      [
        'Acme',
        'must be lower-case letters, digits and hyphens, starting and ending with a letter or digit',
      ],
      [
        '-acme',
        'must be lower-case letters, digits and hyphens, starting and ending with a letter or digit',
      ],
      [
        'acme_corp',
        'must be lower-case letters, digits and hyphens, starting and ending with a letter or digit',
      ],
      ['a'.repeat(64), 'must be at most 63 characters'],
      [
        '',
        'must be lower-case letters, digits and hyphens, starting and ending with a letter or digit',
      ],
    ])('refuses the tenant name %j', (name, message) => {
      expect(problems({ ...tenant(), name })).toEqual([`name: ${message}`])
    })

    it('accepts a 63-character name with digits and hyphens', () => {
      const name = `a-1${'b'.repeat(60)}`
      expect(parseOne({ ...tenant(), name }).name).toBe(name)
    })

    it.each([
      'localhost',
      'acme.localhost:3000',
      '127.0.0.1',
      '[::1]:8080',
      'xn--bcher-kva.example',
    ])('accepts the host %j', (host) => {
      expect(parseOne(tenant({ hosts: [host] })).hosts).toEqual([host])
    })

    it.each([
      [
        'acme localhost',
        'must be a host name (letters, digits, hyphens and dots, or an [IPv6] literal), optionally with :port',
      ],
      [
        'https://acme.localhost',
        'must be a host name (letters, digits, hyphens and dots, or an [IPv6] literal), optionally with :port',
      ],
      [
        'acme.localhost.',
        'must be a host name (letters, digits, hyphens and dots, or an [IPv6] literal), optionally with :port',
      ],
      [
        '[::g]',
        'must be a host name (letters, digits, hyphens and dots, or an [IPv6] literal), optionally with :port',
      ],
      ['acme.localhost:0', 'must have a port between 1 and 65535'],
      ['acme.localhost:70000', 'must have a port between 1 and 65535'],
      [
        `${'a'.repeat(64)}.localhost`,
        'must be a host name of at most 253 characters, 63 per label',
      ],
    ])('refuses the host %j', (host, message) => {
      expect(problems(tenant({ hosts: ['ok.localhost', host] }))).toEqual([
        `config.hosts.1: ${message}`,
      ])
    })

    it('wants at least one host, each once (case-insensitively)', () => {
      expect(problems(tenant({ hosts: [] }))).toEqual(['config.hosts: must not be empty'])
      expect(problems(tenant({ hosts: ['a.localhost', 'A.localhost'] }))).toEqual([
        'config.hosts.1: duplicate host "a.localhost"',
      ])
    })

    it('knows two algorithms', () => {
      expect(problems(tenant({ jwt_algorithm: 'ES256' }))).toEqual([
        'config.jwt_algorithm: must be one of HS256, RS256',
      ])
    })

    it('wants at least one provider script, and each to exist', () => {
      expect(problems(tenant({ providers: [] }))).toEqual(['config.providers: must not be empty'])
      expect(
        problems(tenant({ providers: ['users.provider.mjs', 'missing.mjs'] }), {
          fileExists: (path) => path.endsWith('users.provider.mjs'),
        }),
      ).toEqual(['config.providers.1: provider script not found: tenants/missing.mjs'])
    })

    it('wants a non-empty audience and a jwt_secret of at least 32 characters', () => {
      expect(problems(tenant({ audience: '', jwt_secret: 'z'.repeat(31) }))).toEqual([
        'config.audience: must not be empty',
        'config.jwt_secret: must be at least 32 characters',
      ])
    })

    it('wants a client_secret of at least 16 characters, literal or from the environment', () => {
      const env = { SHORT: 'v'.repeat(15), LONG: 'v'.repeat(16) }
      expect(problems(tenant({}, { client_secret: 'y'.repeat(15) }))).toEqual([
        'config.clients.0.client_secret: must be at least 16 characters',
      ])
      expect(problems(tenant({}, { client_secret: { env: 'SHORT' } }), { env })).toEqual([
        'config.clients.0.client_secret: must be at least 16 characters (environment variable SHORT)',
      ])
      expect(
        parseOne(tenant({}, { client_secret: { env: 'LONG' } }), { env }).clients[0]?.clientSecret,
      ).toBe('v'.repeat(16))
    })

    it('hands short client secrets to shortClientSecrets instead, and keeps them', () => {
      const env = { SHORT: 'v'.repeat(15) }
      const doc = {
        ...tenant(),
        config: {
          ...tenant().config,
          clients: [
            { ...tenant({}, { client_secret: 'y'.repeat(15) }).config.clients[0] },
            {
              ...tenant({}, { client_secret: { env: 'SHORT' } }).config.clients[0],
              client_id: '4f1d2c3b-5a6e-4d7f-8a9b-0c1d2e3f4a5b',
            },
          ],
        },
      }
      const warned: string[] = []
      const parsed = parseOne(doc, {
        env,
        shortClientSecrets: (issue) => warned.push(formatConfigIssue(issue)),
      })
      expect(parsed.clients.map((client) => client.clientSecret)).toEqual([
        'y'.repeat(15),
        'v'.repeat(15),
      ])
      expect(warned).toEqual([
        expect.stringMatching(
          /^tenants\/acme\.yaml:\d+: config\.clients\.0\.client_secret: must be at least 16 characters$/,
        ),
        expect.stringMatching(
          /: config\.clients\.1\.client_secret: must be at least 16 characters \(environment variable SHORT\)$/,
        ),
      ])
      expect(warned.join('\n')).not.toContain('v'.repeat(15))
    })

    it('wants a UUID for client_id, of any version', () => {
      expect(problems(tenant({}, { client_id: 'web-app' }))).toEqual([
        'config.clients.0.client_id: must be a UUID',
      ])
      const nil = '00000000-0000-0000-0000-000000000000'
      expect(parseOne(tenant({}, { client_id: nil })).clients[0]?.clientId).toBe(nil)
    })

    it('wants known grant types, each once', () => {
      expect(
        problems(
          tenant({}, { grant_types: ['authorization_code', 'implicit', 'authorization_code'] }),
        ),
      ).toEqual([
        'config.clients.0.grant_types.1: unknown grant type "implicit"; expected one of authorization_code, refresh_token, password, client_credentials',
        'config.clients.0.grant_types.2: duplicate grant type "authorization_code"',
      ])
      expect(problems(tenant({}, { grant_types: [] }))).toEqual([
        'config.clients.0.grant_types: must not be empty',
      ])
    })

    it('takes client_credentials only for a client with a client_secret', () => {
      expect(
        parseOne(
          tenant(
            {},
            {
              client_secret: 's'.repeat(16),
              grant_types: ['client_credentials'],
              redirect_uris: undefined,
            },
          ),
        ).clients,
      ).toEqual([expect.objectContaining({ grantTypes: ['client_credentials'], redirectUris: [] })])
      expect(problems(tenant({}, { grant_types: ['client_credentials'] }))).toEqual([
        'config.clients.0.grant_types: client_credentials needs a client_secret or private_key_jwt: a public client cannot authenticate for it',
      ])
      // Alongside other grants, and reported with the other problems of the client.
      expect(
        problems(
          tenant(
            {},
            { grant_types: ['authorization_code', 'client_credentials'], redirect_uris: [] },
          ),
        ),
      ).toEqual([
        'config.clients.0.redirect_uris: must list at least one URL when grant_types includes authorization_code',
        'config.clients.0.grant_types: client_credentials needs a client_secret or private_key_jwt: a public client cannot authenticate for it',
      ])
    })

    it('wants redirect URIs for authorization_code, absolute and without fragment', () => {
      expect(problems(tenant({}, { redirect_uris: undefined }))).toEqual([
        'config.clients.0.redirect_uris: must list at least one URL when grant_types includes authorization_code',
      ])
      expect(
        problems(
          tenant({}, { redirect_uris: ['/callback', 'http://localhost/cb#frag', 'http://a b/'] }),
        ),
      ).toEqual([
        'config.clients.0.redirect_uris.0: must be an absolute URL',
        'config.clients.0.redirect_uris.1: must not contain a fragment (#)',
        'config.clients.0.redirect_uris.2: must be an absolute URL',
      ])
      const native = 'com.example.app:/oauth2redirect'
      expect(parseOne(tenant({}, { redirect_uris: [native] })).clients[0]?.redirectUris).toEqual([
        native,
      ])
    })

    it('accepts loopback and private-use redirect URIs for native apps (RFC 8252)', () => {
      const uris = [
        'http://127.0.0.1/callback',
        'http://127.0.0.1:8400/callback',
        'http://[::1]/callback',
        'com.example.app:/oauth2redirect',
        'com.example.app://callback',
        'https://app.example.com/cb',
      ]
      expect(parseOne(tenant({}, { redirect_uris: uris })).clients[0]?.redirectUris).toEqual(uris)
    })

    it('refuses schemes that a browser runs or reads locally, and private ones without a dot', () => {
      const refused = [
        'javascript:alert(1)//',
        'JavaScript://example.com/%0aalert(1)',
        'data:text/html,<b>x</b>',
        'file:///etc/passwd',
        'vbscript:msgbox(1)',
        'blob:https://example.com/1234',
        'myapp:/callback',
      ]
      expect(problems(tenant({}, { redirect_uris: refused }))).toEqual(
        refused.map((uri, index) => {
          const scheme = uri.slice(0, uri.indexOf(':')).toLowerCase()
          return `config.clients.0.redirect_uris.${index}: scheme "${scheme}:" is not allowed; use https, http or a private-use scheme named for a domain (RFC 8252 §7.1), e.g. com.example.app:/callback`
        }),
      )
    })

    it('wants http and https redirect URIs written with //', () => {
      expect(problems(tenant({}, { redirect_uris: ['http:/cb', 'https:example.com/cb'] }))).toEqual(
        [
          'config.clients.0.redirect_uris.0: must start with http://',
          'config.clients.0.redirect_uris.1: must start with https://',
        ],
      )
    })

    it('needs no redirect URI without authorization_code', () => {
      const parsed = parseOne(tenant({}, { grant_types: ['password'], redirect_uris: undefined }))
      expect(parsed.clients[0]?.redirectUris).toEqual([])
    })

    it('wants RFC 6749 scope tokens, each once', () => {
      expect(
        problems(
          tenant(
            {},
            { scopes: ['orders:read', 'two words', 'say"hi"', 'back\\slash', 'orders:read'] },
          ),
        ),
      ).toEqual([
        'config.clients.0.scopes.1: must be a scope token: printable ASCII without spaces, " or \\',
        'config.clients.0.scopes.2: must be a scope token: printable ASCII without spaces, " or \\',
        'config.clients.0.scopes.3: must be a scope token: printable ASCII without spaces, " or \\',
        'config.clients.0.scopes.4: duplicate scope "orders:read"',
      ])
    })

    it('checks the resource form, with spec paths', () => {
      const resource = {
        apiVersion: 'tessera.dev/v2',
        kind: 'Tenant',
        metadata: { namespace: 'x' },
        spec: { ...tenant().config, clients: [{ client_id: 'nope', grant_types: ['password'] }] },
        extra: true,
      }
      expect(problems(resource)).toEqual([
        'apiVersion: must be "tessera.dev/v1"',
        'metadata.name: is required',
        'spec.clients.0.client_id: must be a UUID',
        'extra: unknown field; expected one of apiVersion, kind, metadata, spec, status',
      ])
    })

    it('reports every problem of a document at once', () => {
      const issues = problems(
        tenant(
          { hosts: ['bad host'], providers: ['missing.mjs'], jwt_secret: { env: 'UNSET' } },
          { client_id: 'nope', grant_types: ['implicit'], scopes: ['a b'] },
        ),
        { fileExists: () => false },
      )
      expect(issues).toHaveLength(6)
    })
  })

  describe('rules across documents', () => {
    /** Documents located by a fake `locate`: line = 10 × document number + path length. */
    function documents(...values: unknown[]): ConfigDocument[] {
      return values.map((value, index) => ({
        file: `tenants/${index + 1}.yaml`,
        value,
        locate: (path) => 10 * (index + 1) + path.length,
      }))
    }

    function issues(values: unknown[], overrides: Partial<ParseConfigOptions> = {}): string[] {
      const result = parseConfig(documents(...values), options(overrides))
      if (result.ok) throw new Error('expected issues')
      return result.issues.map(
        (issue) =>
          `${issue.file}:${issue.line}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`,
      )
    }

    const other = (config: Record<string, unknown> = {}, client: Record<string, unknown> = {}) => ({
      ...tenant(
        { hosts: ['other.localhost'], ...config },
        { client_id: OTHER_CLIENT_ID, ...client },
      ),
      name: 'other',
    })

    it('refuses a tenant name used twice', () => {
      expect(issues([tenant(), { ...other(), name: 'acme' }])).toEqual([
        'tenants/2.yaml:21: name: duplicate tenant name "acme" (also defined at tenants/1.yaml:11)',
      ])
    })

    it('refuses a host of another tenant, port ignored, naming that tenant and its line', () => {
      expect(
        issues([tenant(), other({ hosts: ['other.localhost', 'ACME.localhost:8443'] })]),
      ).toEqual([
        'tenants/2.yaml:23: config.hosts.1: host "acme.localhost" is also used by tenant "acme" (tenants/1.yaml:13)',
      ])
    })

    it('allows one tenant to list a host with two ports', () => {
      const parsed = parseConfig(
        documents(tenant({ hosts: ['acme.localhost:3000', 'acme.localhost:8443'] })),
        options(),
      )
      expect(parsed.ok).toBe(true)
    })

    it('refuses a client_id used twice, within a tenant or across tenants', () => {
      const twice = tenant()
      twice.config.clients.push({ ...twice.config.clients[0]!, client_id: CLIENT_ID.toUpperCase() })
      expect(issues([twice])).toEqual([
        `tenants/1.yaml:14: config.clients.1.client_id: duplicate client_id "${CLIENT_ID}" (also used by config.clients.0.client_id, tenants/1.yaml:14)`,
      ])
      expect(issues([tenant(), other({}, { client_id: CLIENT_ID })])).toEqual([
        `tenants/2.yaml:24: config.clients.0.client_id: client_id "${CLIENT_ID}" is also used by tenant "acme" (tenants/1.yaml:14)`,
      ])
    })

    it('checks names, hosts and client ids of documents that have other problems too', () => {
      expect(
        issues([tenant(), { ...other({ audience: '' }, { client_id: CLIENT_ID }), name: 'acme' }]),
      ).toEqual([
        'tenants/2.yaml:21: name: duplicate tenant name "acme" (also defined at tenants/1.yaml:11)',
        'tenants/2.yaml:22: config.audience: must not be empty',
        `tenants/2.yaml:24: config.clients.0.client_id: client_id "${CLIENT_ID}" is also used by tenant "acme" (tenants/1.yaml:14)`,
      ])
    })

    it('refuses an HS256 tenant without a usable secret, at jwt_algorithm or the document', () => {
      const explicit = tenant({ jwt_algorithm: 'HS256' })
      expect(issues([explicit, other()], { jwtSecret: undefined })).toEqual([
        'tenants/1.yaml:12: config.jwt_algorithm: tenant "acme" uses HS256: JWT_SECRET is not set',
        'tenants/2.yaml:20: tenant "other" uses HS256: JWT_SECRET is not set',
      ])
      expect(issues([explicit], { jwtSecret: 'z'.repeat(31) })).toEqual([
        'tenants/1.yaml:12: config.jwt_algorithm: tenant "acme" uses HS256: JWT_SECRET must be at least 32 characters',
      ])
    })

    it('says nothing of the algorithm of a document without config', () => {
      expect(issues([{ name: 'acme' }], { jwtSecret: undefined })).toEqual([
        'tenants/1.yaml:11: config: is required',
      ])
    })

    it('lets an HS256 tenant with its own secret, or an RS256 tenant, do without JWT_SECRET', () => {
      const result = parseConfig(
        documents(tenant({ jwt_secret: 'x'.repeat(32) }), other({ jwt_algorithm: 'RS256' })),
        options({ jwtSecret: undefined }),
      )
      expect(result.ok).toBe(true)
    })

    it('orders issues by document, then by line', () => {
      const result = parseConfig(
        documents({ ...tenant({ hosts: ['bad host'] }), name: 'Bad' }, { ...other(), name: 'Bad' }),
        options(),
      )
      expect(result.ok || result.issues.map((issue) => [issue.file, issue.line])).toEqual([
        ['tenants/1.yaml', 11],
        ['tenants/1.yaml', 13],
        ['tenants/2.yaml', 21],
      ])
    })
  })

  it('uses line 1 without a locate function', () => {
    const result = parseConfig([{ file: FILE, value: { name: 'acme' } }], options())
    expect(result.ok || result.issues[0]).toEqual({
      file: FILE,
      line: 1,
      path: 'config',
      message: 'is required',
    })
  })

  it('parses no documents into no tenants', () => {
    expect(parseConfig([], options())).toEqual({ ok: true, tenants: [] })
  })
})
