import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createConfigIndex,
  parseConfigDocument,
  parseConfigFile,
  readConfigFile,
} from './config-file.js'
import { loadConfigFiles } from './load-config.js'
import { formatConfigIssue } from './model.js'
import { parseYamlDocuments } from './parse-cache.js'
import type { YamlParseCache } from './parse-cache.js'
import { parseConfig } from './parse-config.js'
import { createTempFolder, OPTIONS } from './test-utils/config-files.js'

const PROVIDER = `export default { authenticate: async () => null }\n`

/** A file-form tenant whose provider script sits next to it. */
function tenantYaml(name: string, host: string, clientId?: string): string {
  const clients =
    clientId === undefined
      ? 'clients: []'
      : `clients:\n    - client_id: ${clientId}\n      grant_types: [password]`
  return `name: ${name}\nconfig:\n  hosts: [${host}]\n  providers: [users.provider.mjs]\n  ${clients}\n`
}

const A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'
const B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'

let temp: Awaited<ReturnType<typeof createTempFolder>>
let folder: string
beforeAll(async () => {
  temp = await createTempFolder()
  folder = await temp.write({
    'users.provider.mjs': PROVIDER,
    'a.yaml': tenantYaml('a', 'a.test', A),
    'b.yaml': tenantYaml('b', 'b.test', B),
  })
})
afterAll(() => temp.remove())

/** A full garbage collection: V8's `gc`, from a context made while `--expose-gc` is set. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  try {
    ;(runInNewContext('gc') as () => void)()
  } finally {
    setFlagsFromString('--no-expose-gc')
  }
}

const lines = (issues: readonly Parameters<typeof formatConfigIssue>[0][]) =>
  issues.map(formatConfigIssue)

describe('parseConfigFile and readConfigFile', () => {
  it('checks one file alone, with the real lines of its problems', () => {
    const file = join(folder, 'c.yaml')
    const text = `# comment\n${tenantYaml('c', 'c.test', 'not-a-uuid')}`
    const parsed = parseConfigFile(file, text, OPTIONS)
    expect(parsed.tenants).toEqual([])
    expect(lines(parsed.issues)).toEqual([`${file}:7: config.clients.0.client_id: must be a UUID`])

    const good = parseConfigFile(file, `\n\n${tenantYaml('c', 'c.test', A)}`, OPTIONS)
    expect(good.issues).toEqual([])
    expect(good.tenants.map((tenant) => [tenant.name, tenant.source.line])).toEqual([['c', 3]])
  })

  it('answers a file that cannot be read as a file with one problem', () => {
    const missing = readConfigFile(join(folder, 'gone.yaml'), OPTIONS)
    expect(missing.tenants).toEqual([])
    expect(lines(missing.issues)).toEqual([
      expect.stringMatching(/gone\.yaml: cannot read: ENOENT/) as unknown as string,
    ])
  })
})

describe('createConfigIndex', () => {
  it('checks a changed file against the others, and forgets a file released', async () => {
    const loaded = await loadConfigFiles(folder, OPTIONS)
    expect(loaded.tenants.map((tenant) => tenant.name)).toEqual(['a', 'b'])
    const { index } = loaded
    const [a] = loaded.files

    // b's next version takes a's host and client_id: reported on b, at their lines, naming a.
    const bFile = join(folder, 'b.yaml')
    const [, oldB] = loaded.files
    index.release(oldB!)
    const clash = parseConfigFile(bFile, tenantYaml('b', 'a.test', A), OPTIONS)
    expect(clash.issues).toEqual([])
    expect(lines(index.admit(clash))).toEqual([
      `${bFile}:3: config.hosts.0: host "a.test" is also used by tenant "a" (${join(folder, 'a.yaml')}:3)`,
      `${bFile}:6: config.clients.0.client_id: client_id "${A}" is also used by tenant "a" (${join(folder, 'a.yaml')}:6)`,
    ])
    index.release(clash)

    // Once a is released, the same file is taken, and then holds the host against a.
    index.release(a!)
    expect(index.admit(clash)).toEqual([])
    expect(lines(index.admit(a!))).toContainEqual(
      expect.stringContaining(`host "a.test" is also used by tenant "b" (${bFile}:3)`),
    )
  })

  it('keeps no parsed value of an admitted file, only what finds its lines later', async () => {
    const aFile = join(folder, 'a.yaml')
    const text = tenantYaml('a', 'a.test', A)
    // The parsed documents come from a cache, so that the test holds a weak reference to them.
    const refs: WeakRef<object>[] = []
    const parseCache: YamlParseCache = {
      get(cached) {
        const documents = parseYamlDocuments(cached)
        for (const document of documents) {
          if (
            'value' in document &&
            typeof document.value === 'object' &&
            document.value !== null
          ) {
            refs.push(new WeakRef(document.value))
          }
        }
        return documents
      },
    }
    const index = createConfigIndex(OPTIONS.jwtSecret)
    const admitted = parseConfigFile(aFile, text, { ...OPTIONS, parseCache })
    expect(index.admit(admitted)).toEqual([])
    expect(refs).toHaveLength(1)
    // A WeakRef holds its target until the job that made it ends.
    await nextTurn()
    collectGarbage()
    // Ten thousand files' parsed values, kept beside their tenants, were megabytes.
    expect(refs[0]!.deref()).toBeUndefined()
    // The admitted file still names its lines to a later file that clashes with it.
    const bFile = join(folder, 'b.yaml')
    const clash = parseConfigFile(bFile, `\n${tenantYaml('b', 'a.test', B)}`, OPTIONS)
    expect(lines(index.admit(clash))).toEqual([
      `${bFile}:4: config.hosts.0: host "a.test" is also used by tenant "a" (${aFile}:3)`,
    ])
  })

  it('reports a tenant name used twice in one file', () => {
    const file = join(folder, 'twice.yaml')
    const text = `${tenantYaml('t', 't1.test')}---\n${tenantYaml('t', 't2.test')}`
    const parsed = parseConfigFile(file, text, OPTIONS)
    expect(parsed.issues).toEqual([])
    expect(lines(createConfigIndex(OPTIONS.jwtSecret).admit(parsed))).toEqual([
      `${file}:7: name: duplicate tenant name "t" (also defined at ${file}:1)`,
    ])
  })
})

describe('parseConfigDocument', () => {
  /** A `kind: Tenant` resource as an API server answers it, provider paths already absolute. */
  const resource = (name: string, hosts: unknown[], clientIds: string[]) => ({
    apiVersion: 'tessera.dev/v1',
    kind: 'Tenant',
    metadata: { name, resourceVersion: '3' },
    spec: {
      hosts,
      providers: [join(folder, 'users.provider.mjs')],
      clients: clientIds.map((client_id) => ({ client_id, grant_types: ['password'] })),
    },
  })
  const at = (name: string) => ({ file: `kubernetes:tenants/${name}`, locate: () => 0 })

  it('checks a parsed value alone, as parseConfig checks that one document', () => {
    const value = resource('acme', ['Acme.Test'], [A])
    const unit = parseConfigDocument({ ...at('acme'), value }, OPTIONS)
    const alone = parseConfig([{ ...at('acme'), value }], OPTIONS)
    expect(unit.issues).toEqual([])
    expect(alone.ok && alone.tenants).toEqual(unit.tenants)
    expect(unit.tenants.map((tenant) => [tenant.name, tenant.hosts, tenant.source])).toEqual([
      ['acme', ['acme.test'], { file: 'kubernetes:tenants/acme', line: 0 }],
    ])

    const bad = resource('acme', ['a b.test'], ['not-a-uuid'])
    const refused = parseConfigDocument({ ...at('acme'), value: bad }, OPTIONS)
    expect(refused.tenants).toEqual([])
    expect(refused.issues).toEqual(
      (parseConfig([{ ...at('acme'), value: bad }], OPTIONS) as { issues: unknown }).issues,
    )
    expect(refused.issues.map((issue) => issue.path)).toEqual([
      'spec.hosts.0',
      'spec.clients.0.client_id',
    ])
    // Without a locate, every issue is on line 1, as parseConfig has it.
    expect(parseConfigDocument({ file: 'x', value: 'not a mapping' }, OPTIONS).issues).toEqual([
      expect.objectContaining({ file: 'x', line: 1, path: '' }),
    ])
  })

  it('is admitted to an index: a clash is reported on the later unit, which claims nothing once released', () => {
    const index = createConfigIndex(OPTIONS.jwtSecret)
    const globex = parseConfigDocument(
      { ...at('globex'), value: resource('globex', ['globex.test', 'shared.test'], [B]) },
      OPTIONS,
    )
    expect(index.admit(globex)).toEqual([])
    const acme = parseConfigDocument(
      { ...at('acme'), value: resource('acme', ['acme.test', 'SHARED.test:8443'], [B]) },
      OPTIONS,
    )
    expect(acme.issues).toEqual([])
    expect(lines(index.admit(acme))).toEqual([
      'kubernetes:tenants/acme: spec.hosts.1: host "shared.test" is also used by tenant "globex" (kubernetes:tenants/globex:0)',
      `kubernetes:tenants/acme: spec.clients.0.client_id: client_id "${B}" is also used by tenant "globex" (kubernetes:tenants/globex:0)`,
    ])
    index.release(acme)
    // acme.test was acme's alone; released, it is free for another tenant.
    const initech = parseConfigDocument(
      { ...at('initech'), value: resource('initech', ['acme.test'], [A]) },
      OPTIONS,
    )
    expect(index.admit(initech)).toEqual([])
    index.release(globex)
    const again = parseConfigDocument(
      { ...at('acme'), value: resource('acme', ['shared.test'], [B]) },
      OPTIONS,
    )
    expect(index.admit(again)).toEqual([])
  })
})
