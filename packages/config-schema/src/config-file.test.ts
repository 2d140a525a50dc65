import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createConfigIndex, parseConfigFile, readConfigFile } from './config-file.js'
import { loadConfigFiles } from './load-config.js'
import { formatConfigIssue } from './model.js'
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
