import { describe, expect, it } from 'vitest'
import { tenantResourceJsonSchema } from './json-schema.js'
import { parseConfig } from './parse-config.js'
import { JWT_SECRET } from './test-utils/config-files.js'

const CLIENT_ID = '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'
const FILE = 'tenants/acme.yaml'
const FIELD = 'config.clients.0.allowed_origins'

function document(allowedOrigins: unknown) {
  return {
    name: 'acme',
    config: {
      hosts: ['acme.localhost'],
      providers: ['users.provider.mjs'],
      clients: [
        {
          client_id: CLIENT_ID,
          redirect_uris: ['http://localhost:8081/callback'],
          allowed_origins: allowedOrigins,
        },
      ],
    },
  }
}

function parse(allowedOrigins: unknown) {
  return parseConfig([{ file: FILE, value: document(allowedOrigins) }], {
    env: {},
    jwtSecret: JWT_SECRET,
    fileExists: () => true,
  })
}

/** The issues of one list, as `path: message`. */
function problems(allowedOrigins: unknown): string[] {
  const result = parse(allowedOrigins)
  if (result.ok) throw new Error(`expected issues for ${JSON.stringify(allowedOrigins)}`)
  return result.issues.map((issue) => `${issue.path}: ${issue.message}`)
}

function accepted(allowedOrigins: unknown): string[] | undefined {
  const result = parse(allowedOrigins)
  if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
  return result.tenants[0]?.clients[0]?.allowedOrigins
}

describe('client allowed_origins', () => {
  it('keeps serialized origins: http, https, ports, IPv4, IPv6, punycode', () => {
    const origins = [
      'https://app.acme.test',
      'http://localhost:8081',
      'http://127.0.0.1:5173',
      'http://[::1]:8080',
      'https://xn--bcher-kva.test',
      'https://a-b_c.example:65535',
    ]
    expect(accepted(origins)).toEqual(origins)
  })

  it('is absent from the model when not given or empty', () => {
    expect(accepted(undefined)).toBeUndefined()
    expect(accepted([])).toBeUndefined()
  })

  it.each([
    ['*', 'wildcards are not allowed'],
    ['https://*.acme.test', 'wildcards are not allowed'],
    ['null', 'must not be null'],
    ['NULL', 'must not be null'],
    ['https://app.acme.test/', 'must not end with a slash; write https://app.acme.test'],
    ['https://app.acme.test/callback', 'must not contain a path; write https://app.acme.test'],
    ['https://app.acme.test?x=1', 'must not contain a query'],
    ['https://app.acme.test#top', 'must not contain a fragment'],
    ['https://user:pw@app.acme.test', 'must not contain user information'],
    ['https://user@app.acme.test', 'must not contain user information'],
    ['https://App.Acme.TEST', 'must be written as browsers send it: https://app.acme.test'],
    ['HTTPS://app.acme.test', 'must be written as browsers send it: https://app.acme.test'],
    ['https://app.acme.test:443', 'must be written as browsers send it: https://app.acme.test'],
    ['http://localhost:80', 'must be written as browsers send it: http://localhost'],
    ['https://bücher.test', 'must be written as browsers send it: https://xn--bcher-kva.test'],
    ['http://[0:0:0:0:0:0:0:1]:8080', 'must be written as browsers send it: http://[::1]:8080'],
    ['http://localhost:99999', 'must be an origin'],
    ['http://[not-ipv6]', 'must be an origin'],
    ['ftp://files.acme.test', 'scheme "ftp:" is not allowed'],
    ['javascript:alert(1)', 'scheme "javascript:" is not allowed'],
    ['file:///etc/passwd', 'scheme "file:" is not allowed'],
    ['com.acme.app:/callback', 'scheme "com.acme.app:" is not allowed'],
    ['app.acme.test', 'must be an origin'],
    ['//app.acme.test', 'must be an origin'],
    ['https:app.acme.test', 'must not contain a path'],
    [' https://app.acme.test', 'must be an origin'],
    ['https://app.acme.test\n', 'must be an origin'],
    ['', 'must be an origin'],
    [`https://${'a'.repeat(400)}.test`, 'must have at most 300 characters'],
  ])('refuses %j, saying %j', (origin, message) => {
    const [problem, ...more] = problems([origin])
    expect(problem).toContain(`${FIELD}.0: `)
    expect(problem).toContain(message)
    expect(more).toEqual([])
  })

  it('refuses wrong types, naming the field', () => {
    expect(problems('https://app.acme.test')).toEqual([`${FIELD}: must be a list`])
    expect(problems([42])).toEqual([`${FIELD}.0: must be a string`])
    expect(problems([{ origin: 'https://app.acme.test' }])).toEqual([
      `${FIELD}.0: must be a string`,
    ])
    expect(problems(null)).toEqual([`${FIELD}: must be a list`])
  })

  it('refuses an origin listed twice and reports every bad entry at once', () => {
    expect(
      problems(['https://app.acme.test', 'https://app.acme.test', '*', 'https://ok.test/']),
    ).toEqual([
      `${FIELD}.2: must be one origin: wildcards are not allowed, list each origin`,
      `${FIELD}.3: must not end with a slash; write https://ok.test`,
      `${FIELD}.1: duplicate origin "https://app.acme.test"`,
    ])
  })

  it('is in the Tenant resource schema, with the pattern that refuses paths and wildcards', () => {
    interface Node {
      type?: string
      pattern?: string
      items?: Node
      properties?: Record<string, Node>
    }
    const root = tenantResourceJsonSchema() as Node
    const field = root.properties?.spec?.properties?.clients?.items?.properties?.allowed_origins
    expect(field?.type).toBe('array')
    const pattern = new RegExp(field?.items?.pattern ?? '(?!)')
    expect(pattern.test('https://app.acme.test')).toBe(true)
    expect(pattern.test('http://[::1]:8080')).toBe(true)
    for (const bad of ['*', 'null', 'https://app.acme.test/', 'https://App.test', 'ftp://x']) {
      expect(pattern.test(bad), bad).toBe(false)
    }
  })
})
