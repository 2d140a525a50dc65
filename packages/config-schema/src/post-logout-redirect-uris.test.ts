import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantResourceJsonSchema } from './json-schema.js'
import { parseConfig } from './parse-config.js'
import { createTempFolder, JWT_SECRET, loadIssues } from './test-utils/config-files.js'

const CLIENT_ID = '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'
const FILE = 'tenants/acme.yaml'
const FIELD = 'config.clients.0.post_logout_redirect_uris'
const NEEDS_OPENID = 'post_logout_redirect_uris needs openid in scopes'
const SCHEME_MESSAGE =
  'use https, http or a private-use scheme named for a domain (RFC 8252 §7.1), e.g. com.example.app:/callback'

/** The client of a file-form tenant, with `client` overriding its fields. */
function fileForm(client: Record<string, unknown>) {
  return {
    name: 'acme',
    config: {
      hosts: ['acme.localhost'],
      providers: ['users.provider.mjs'],
      clients: [
        {
          client_id: CLIENT_ID,
          redirect_uris: ['https://app.acme.test/callback'],
          scopes: ['openid', 'profile'],
          ...client,
        },
      ],
    },
  }
}

/** The same tenant as a Kubernetes resource. */
function resourceForm(client: Record<string, unknown>) {
  return {
    apiVersion: 'tessera.dev/v1',
    kind: 'Tenant',
    metadata: { name: 'acme', namespace: 'tessera' },
    spec: fileForm(client).config,
  }
}

function parse(value: unknown) {
  return parseConfig([{ file: FILE, value }], {
    env: {},
    jwtSecret: JWT_SECRET,
    fileExists: () => true,
  })
}

/** The issues of one document, as `path: message`. */
function problems(value: unknown): string[] {
  const result = parse(value)
  if (result.ok) throw new Error(`expected issues for ${JSON.stringify(value)}`)
  return result.issues.map((issue) => `${issue.path}: ${issue.message}`)
}

/** The model's list of the one client. */
function accepted(value: unknown): string[] | undefined {
  const result = parse(value)
  if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
  return result.tenants[0]?.clients[0]?.postLogoutRedirectUris
}

let temp: Awaited<ReturnType<typeof createTempFolder>>
beforeAll(async () => {
  temp = await createTempFolder()
})
afterAll(async () => {
  await temp.remove()
})

describe('client post_logout_redirect_uris', () => {
  it('keeps the URIs exactly as written: case, port, query, trailing slash, native schemes', () => {
    const uris = [
      'https://app.acme.test/signed-out',
      'https://App.Acme.TEST:8443/Bye/?from=idp&x=1',
      'https://app.acme.test/',
      'http://localhost:8081/logged-out',
      'http://127.0.0.1:8400/logout',
      'com.example.app:/signed-out',
    ]
    expect(accepted(fileForm({ post_logout_redirect_uris: uris }))).toEqual(uris)
  })

  it('is [] when not given, with or without openid', () => {
    expect(accepted(fileForm({}))).toEqual([])
    expect(accepted(fileForm({ scopes: ['orders:read'] }))).toEqual([])
    // An empty list asks for nothing, so it needs no openid either.
    expect(accepted(fileForm({ scopes: [], post_logout_redirect_uris: [] }))).toEqual([])
  })

  it('refuses what redirect_uris refuses, each entry at its own index', () => {
    expect(
      problems(
        fileForm({
          post_logout_redirect_uris: [
            '/signed-out',
            'https://app.acme.test/bye#top',
            'https://app acme.test/',
            'javascript:alert(1)//',
            'myapp:/bye',
            'http:/bye',
            'https:app.acme.test/bye',
          ],
        }),
      ),
    ).toEqual([
      `${FIELD}.0: must be an absolute URL`,
      `${FIELD}.1: must not contain a fragment (#)`,
      `${FIELD}.2: must be an absolute URL`,
      `${FIELD}.3: scheme "javascript:" is not allowed; ${SCHEME_MESSAGE}`,
      `${FIELD}.4: scheme "myapp:" is not allowed; ${SCHEME_MESSAGE}`,
      `${FIELD}.5: must start with http://`,
      `${FIELD}.6: must start with https://`,
    ])
  })

  it('refuses wrong types, naming the field', () => {
    expect(problems(fileForm({ post_logout_redirect_uris: 'https://app.acme.test/' }))).toEqual([
      `${FIELD}: must be a list`,
    ])
    expect(problems(fileForm({ post_logout_redirect_uris: [42] }))).toEqual([
      `${FIELD}.0: must be a string`,
    ])
  })

  it('refuses a URI listed twice, compared as exact strings', () => {
    expect(
      problems(
        fileForm({
          post_logout_redirect_uris: [
            'https://app.acme.test/bye',
            'https://APP.acme.test/bye',
            'https://app.acme.test/bye',
          ],
        }),
      ),
    ).toEqual([`${FIELD}.2: duplicate post-logout redirect URI "https://app.acme.test/bye"`])
  })

  it('needs openid in scopes', () => {
    for (const scopes of [undefined, [], ['profile', 'email', 'OpenID']]) {
      expect(
        problems(fileForm({ scopes, post_logout_redirect_uris: ['https://app.acme.test/bye'] })),
        JSON.stringify(scopes),
      ).toEqual([`${FIELD}: ${NEEDS_OPENID}`])
    }
  })

  it('reports the bad entries alone when the list is also without openid, and other fields too', () => {
    expect(
      problems(
        fileForm({
          scopes: ['profile'],
          post_logout_redirect_uris: ['https://app.acme.test/bye#x'],
        }),
      ),
    ).toEqual([`${FIELD}.0: must not contain a fragment (#)`])
    // A broken scope list leaves openid unknown: only the scope is reported.
    expect(
      problems(
        fileForm({ scopes: ['two words'], post_logout_redirect_uris: ['https://app.acme.test/'] }),
      ),
    ).toEqual([
      'config.clients.0.scopes.0: must be a scope token: printable ASCII without spaces, " or \\',
    ])
    // A problem in another field does not hide this one.
    expect(
      problems(
        fileForm({
          scopes: ['profile'],
          post_logout_redirect_uris: ['https://app.acme.test/bye'],
          introspection: 'everything',
        }),
      ),
    ).toEqual([
      'config.clients.0.introspection: must be one of own, tenant',
      `${FIELD}: ${NEEDS_OPENID}`,
    ])
  })

  it('reads the resource form alike, with spec paths', () => {
    const uris = ['https://app.acme.test/bye']
    expect(accepted(resourceForm({ post_logout_redirect_uris: uris }))).toEqual(uris)
    expect(
      problems(resourceForm({ scopes: ['profile'], post_logout_redirect_uris: uris })),
    ).toEqual([`spec.clients.0.post_logout_redirect_uris: ${NEEDS_OPENID}`])
    expect(problems(resourceForm({ post_logout_redirect_uris: [...uris, ...uris] }))).toEqual([
      `spec.clients.0.post_logout_redirect_uris.1: duplicate post-logout redirect URI "${uris[0]}"`,
    ])
  })

  it('puts the openid problem on the line of the field', async () => {
    const folder = await temp.write({
      'acme.yaml': `
        apiVersion: tessera.dev/v1
        kind: Tenant
        metadata: { name: acme }
        spec:
          hosts: [acme.localhost]
          providers: [users.provider.mjs]
          clients:
            - client_id: ${CLIENT_ID}
              redirect_uris: [https://app.acme.test/callback]
              scopes: [profile]
              post_logout_redirect_uris:
                - https://app.acme.test/bye
      `,
      'users.provider.mjs': 'export default { authenticate: async () => null }\n',
    })
    expect(await loadIssues(folder)).toEqual([
      `${folder}/acme.yaml:11: spec.clients.0.post_logout_redirect_uris: ${NEEDS_OPENID}`,
    ])
  })

  it('is in the Tenant resource schema: a list of strings, empty by default', () => {
    interface Node {
      type?: string
      default?: unknown
      description?: string
      items?: Node
      properties?: Record<string, Node>
    }
    const root = tenantResourceJsonSchema() as Node
    const client = root.properties?.spec?.properties?.clients?.items?.properties
    expect(client?.post_logout_redirect_uris).toMatchObject({
      type: 'array',
      default: [],
      items: { type: 'string' },
    })
    expect(client?.post_logout_redirect_uris?.description).toContain('openid')
  })
})
