import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { loadConfig, parseConfig } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { CORS_PATHS } from '../../src/app.js'
import { corsOrigins } from '../../src/http/cors.js'
import { codeBlocks, parseDocClients } from '../support/docs.js'
import { JWT_SECRET } from '../support/issuer.js'

const DOC = fileURLToPath(new URL('../../../../docs/cors.md', import.meta.url))
const CONFIGURATION = fileURLToPath(new URL('../../../../docs/configuration.md', import.meta.url))
const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url))
const text = readFileSync(DOC, 'utf8')

const blocks = (language: string): string[] => codeBlocks(text, language)
const parseClients = (clients: unknown) => parseDocClients('tenants/acme.yaml', clients)

describe('docs/cors.md', () => {
  it('lists as CORS endpoints exactly those the issuer answers CORS on', () => {
    const table = text.slice(text.indexOf('| endpoint'), text.indexOf('## Which origins'))
    const listed = [...table.matchAll(/^\| `(?:GET|POST) ([^`]+)`\s*\| yes/gm)].map((m) => m[1])
    expect([...new Set(listed)].sort()).toEqual([...CORS_PATHS].sort())
    expect(table).toMatch(/^\| `POST \/introspect`\s*\| \*\*never\*\*/m)
  })

  it('shows a client configuration that the schema takes, with the origins it says', () => {
    const [yaml] = blocks('yaml')
    const { clients } = parse(yaml ?? '') as { clients: unknown }
    const result = parseClients(clients)
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    expect([...corsOrigins(result.tenants[0]!)].sort()).toEqual([
      'http://127.0.0.1:5173',
      'http://localhost:8081',
      'https://app.acme.test',
    ])
  })

  it('shows the messages the schema gives for the entries it refuses', () => {
    const [shown] = blocks('text')
    const result = parseClients([
      {
        client_id: 'bf2d7604-7f24-4538-b46f-140f16693256',
        grant_types: ['password'],
      },
      {
        client_id: 'ae47b9ad-7918-43cc-8e8c-247296b26e5f',
        grant_types: ['password'],
        allowed_origins: ['https://app.acme.test/', 'https://App.Acme.test', '*', 'null'],
      },
    ])
    if (result.ok) throw new Error('expected issues')
    const messages = result.issues.map((issue) => `${issue.path}: ${issue.message}`)
    const documented = (shown ?? '')
      .trim()
      .split('\n')
      .map((line) => line.replace(/^tenants\/acme\.yaml:\d+: /, ''))
    expect(documented).toEqual(messages)
  })

  it('is right about the acme example: its SPA origin gets CORS', async () => {
    const tenants = await loadConfig(EXAMPLES, { env: {}, jwtSecret: JWT_SECRET })
    const acme = tenants.find((tenant) => tenant.name === 'acme')
    expect(acme).toBeDefined()
    expect(corsOrigins(acme!).has('http://localhost:8081')).toBe(true)
    expect(text).toContain("fetch('http://acme.localhost:3000/token'")
    // Under dev on the default PORT, this host's issuer URL is http://acme.localhost:3000.
    expect(acme?.hosts).toContain('acme.localhost')
  })

  it('agrees with the complete example of docs/configuration.md', () => {
    const doc = readFileSync(CONFIGURATION, 'utf8')
    const example = doc.slice(doc.indexOf('## A complete example'))
    const yaml = /```yaml\n([\s\S]*?)```/.exec(example)?.[1] ?? ''
    const env: Record<string, string> = {}
    for (const match of yaml.matchAll(/env: ([A-Z_]+)/g)) env[match[1] ?? ''] = 'x'.repeat(32)
    const result = parseConfig(
      parseAllDocuments(yaml).map((document) => ({
        file: CONFIGURATION,
        value: document.toJS() as unknown,
      })),
      { env, jwtSecret: JWT_SECRET, fileExists: () => true },
    )
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    const acme = result.tenants.find((tenant) => tenant.name === 'acme')
    expect([...corsOrigins(acme!)].sort()).toEqual([
      'https://app.acme.example',
      'https://www.acme.example',
    ])
    expect(doc).toMatch(/^\| `allowed_origins` .*\[cors\.md\]\(cors\.md\)/m)
  })
})
