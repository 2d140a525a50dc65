import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfigFile } from './config-file.js'
import { parseYaml } from './internal/read-yaml.js'
import type { ParsedDocument } from './internal/read-yaml.js'
import { loadConfigFiles } from './load-config.js'
import { formatConfigIssue } from './model.js'
import {
  decodeParsedDocuments,
  encodeParsedDocuments,
  parseCacheKey,
  parseYamlDocuments,
  type YamlParseCache,
} from './parse-cache.js'
import { createTempFolder, OPTIONS } from './test-utils/config-files.js'

const PROVIDER = `export default { authenticate: async () => null }\n`
/** A tenant with one confidential client, whose client_id is made of `digit`. */
function tenantYaml(name: string, host: string, digit = 'a'): string {
  const id = `${digit.repeat(8)}-${digit.repeat(4)}-4${digit.repeat(3)}-8${digit.repeat(3)}-${digit.repeat(12)}`
  return (
    `name: ${name}\nconfig:\n  hosts: [${host}]\n  providers: [users.provider.mjs]\n` +
    `  clients:\n    - client_id: ${id}\n      client_secret: s3cret-of-tenant-${name}\n      grant_types: [password]\n`
  )
}

/** A cache over a map of encoded documents, counting its hits; `fill` stores a text's parse. */
function memoryCache(): YamlParseCache & {
  entries: Map<string, string>
  hits: number
  fill(text: string): void
} {
  const entries = new Map<string, string>()
  const cache = {
    entries,
    hits: 0,
    get(text: string) {
      const json = entries.get(parseCacheKey(text))
      const documents = json === undefined ? undefined : decodeParsedDocuments(json)
      if (documents !== undefined) cache.hits++
      return documents
    },
    fill(text: string) {
      const json = encodeParsedDocuments(parseYamlDocuments(text))
      if (json !== undefined) entries.set(parseCacheKey(text), json)
    },
  }
  return cache
}

let temp: Awaited<ReturnType<typeof createTempFolder>>
let folder: string
beforeAll(async () => {
  temp = await createTempFolder()
  folder = await temp.write({
    'users.provider.mjs': PROVIDER,
    'a.yaml': tenantYaml('a', 'a.test'),
    'b.yaml': tenantYaml('b', 'b.test', 'b'),
    'broken.yaml.off': 'name: [\n',
  })
})
afterAll(() => temp.remove())

describe('parseCacheKey', () => {
  it('is the SHA-256 hex of the parser version and the text: equal texts only', () => {
    expect(parseCacheKey('name: a\n')).toMatch(/^[0-9a-f]{64}$/)
    expect(parseCacheKey('name: a\n')).toBe(parseCacheKey('name: a\n'))
    expect(parseCacheKey('name: a\n')).not.toBe(parseCacheKey('name: a \n'))
  })
})

describe('encodeParsedDocuments and decodeParsedDocuments', () => {
  it('give back exactly what parseYaml answered, for documents, errors and failures', () => {
    const texts = [
      tenantYaml('a', 'a.test'),
      'a: 1\n---\n---\nb: [x, {c: null}]\n',
      'a: [\n',
      '# only a comment\n',
      'n: 0x1F\nf: 1.5e3\nt: true\ns: "\\u00e9"\n',
    ]
    for (const text of texts) {
      const parsed = parseYaml(text)
      const json = encodeParsedDocuments(parsed)
      expect(json, text).toBeTypeOf('string')
      // An empty document's undefined value is left out, and read back as no value.
      expect(decodeParsedDocuments(json ?? '')).toEqual(
        JSON.parse(JSON.stringify(parsed)) as unknown,
      )
    }
  })

  it('refuses what JSON would not give back exactly', () => {
    const refused = [
      'a: .inf\n',
      'a: .nan\n',
      'a: -0\n',
      'a: &x [1]\nb: *x\n',
      '__proto__: {x: 1}\n',
      '%YAML 1.1\n---\nd: 2001-12-14\n',
      '%YAML 1.1\n---\nb: !!binary aGVsbG8=\n',
      '%YAML 1.1\n---\ns: !!set {a, b}\n',
    ]
    for (const text of refused) expect(encodeParsedDocuments(parseYaml(text)), text).toBeUndefined()
  })

  it('answers undefined for any text it did not make', () => {
    for (const text of [
      '',
      'null',
      '{}',
      '[{"value": 1}]',
      '[{"offset": 1.5, "value": 1}]',
      '[{"errors": [{"offset": 0}]}]',
      '[{"failed": "x", "offset": 0, "extra": 1}]',
      '[{"value": 1, "offset": -2}]',
    ]) {
      expect(decodeParsedDocuments(text), text).toBeUndefined()
    }
  })

  it('round-trips whatever JSON-safe value it accepts (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: -1, max: 1000 }), (value, offset) => {
        const documents: ParsedDocument[] = [{ value, offset }]
        const json = encodeParsedDocuments(documents)
        if (json === undefined) return
        expect(decodeParsedDocuments(json)).toEqual(JSON.parse(json) as unknown)
        expect(JSON.parse(json)).toEqual(documents)
      }),
    )
  })
})

describe('a parse cache in loadConfigFiles and parseConfigFile', () => {
  it('takes every file it knows from the cache and parses the others, giving the same tenants', async () => {
    const uncached = await loadConfigFiles(folder, OPTIONS)
    const cache = memoryCache()
    const empty = await loadConfigFiles(folder, { ...OPTIONS, parseCache: cache })
    expect(cache.hits).toBe(0)
    expect(empty.tenants).toEqual(uncached.tenants)
    cache.fill(tenantYaml('a', 'a.test'))
    const one = await loadConfigFiles(folder, { ...OPTIONS, parseCache: cache })
    expect(cache.hits).toBe(1)
    cache.fill(tenantYaml('b', 'b.test', 'b'))
    const both = await loadConfigFiles(folder, { ...OPTIONS, parseCache: cache })
    expect(cache.hits).toBe(3)
    expect(one.tenants).toEqual(uncached.tenants)
    expect(both.tenants).toEqual(uncached.tenants)
  })

  it('uses what the cache answers, and still checks it as it checks a parsed file', () => {
    const text = tenantYaml('a', 'a.test')
    const cache = memoryCache()
    // A cache that answers another tenant for this text: what is checked is what it answers.
    const other = parseYaml(tenantYaml('z', 'z.test'))
    cache.entries.set(parseCacheKey(text), encodeParsedDocuments(other) ?? '')
    const file = parseConfigFile(`${folder}/a.yaml`, text, { ...OPTIONS, parseCache: cache })
    expect(file.tenants.map((tenant) => tenant.name)).toEqual(['z'])

    const bad = parseYaml(
      'name: z\nconfig:\n  hosts: [z.test]\n  providers: [missing.mjs]\n  clients: []\n',
    )
    cache.entries.set(parseCacheKey(text), encodeParsedDocuments(bad) ?? '')
    const refused = parseConfigFile(`${folder}/a.yaml`, text, { ...OPTIONS, parseCache: cache })
    expect(refused.tenants).toEqual([])
    expect(refused.issues.length).toBeGreaterThan(0)
  })

  it('reports a YAML error of a cached parse on its line, as without the cache', () => {
    const text = 'name: a\nconfig:\n  hosts: [a.test\n'
    const cache = memoryCache()
    const fresh = parseConfigFile('t.yaml', text, OPTIONS)
    cache.fill(text)
    const again = parseConfigFile('t.yaml', text, { ...OPTIONS, parseCache: cache })
    expect(cache.hits).toBe(1)
    expect(again.issues.map(formatConfigIssue)).toEqual(fresh.issues.map(formatConfigIssue))
    expect(again.issues[0]?.line).toBeGreaterThan(1)
  })

  it('locates a schema problem of a cached parse on its line', () => {
    const text = `name: a\nconfig:\n  hosts: [a.test]\n  providers: [users.provider.mjs]\n  clients:\n    - client_id: not-a-uuid\n`
    const cache = memoryCache()
    const fresh = parseConfigFile(`${folder}/a.yaml`, text, OPTIONS)
    cache.fill(text)
    const again = parseConfigFile(`${folder}/a.yaml`, text, { ...OPTIONS, parseCache: cache })
    expect(cache.hits).toBe(1)
    expect(again.issues).toEqual(fresh.issues)
    expect(again.issues.some((issue) => issue.line === 6)).toBe(true)
  })
})
