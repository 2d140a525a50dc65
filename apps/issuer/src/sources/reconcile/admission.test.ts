import { createConfigIndex, parseConfigFile } from '@tessera/config-schema'
import type { ConfigFile, ConfigIndex } from '@tessera/config-schema'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { admitChanges, readmitLastGood } from './admission.js'

const SECRET = 'admission-test-secret-0123456789-abcdef'

const PARSE = { env: {}, jwtSecret: SECRET, fileExists: () => true }

/** A tenant file of tenant `name` at `hosts`, with a client_id of its own (`id`). */
function tenantFile(file: string, name: string, hosts: readonly string[], id: number): ConfigFile {
  return parseConfigFile(file, tenantText(name, hosts, id), PARSE)
}

function tenantText(name: string, hosts: readonly string[], id: number): string {
  return [
    `name: ${name}`,
    'config:',
    `  hosts: [${hosts.join(', ')}]`,
    '  providers: [users.mjs]',
    '  clients:',
    `    - client_id: ${id.toString(16).padStart(8, '0')}-0000-4000-8000-000000000001`,
    '      client_secret: client-secret-long',
    '      grant_types: [password]',
    '',
  ].join('\n')
}

/** An index holding `files`, as a first load leaves it, and their last good versions by name. */
function loaded(files: readonly ConfigFile[]) {
  const index = createConfigIndex(SECRET)
  for (const file of files) expect(index.admit(file)).toEqual([])
  const lastGood = new Map(files.map((file) => [file.file, file]))
  return { index, lastGood: (name: string) => lastGood.get(name) }
}

/** The problems `file` would have now, without changing the index. */
function probe(index: ConfigIndex, file: ConfigFile): string[] {
  const issues = index.admit(file)
  index.release(file)
  return issues.map((issue) => issue.message)
}

describe('admitChanges', () => {
  it('takes a host that another file of the same change gives up, whatever their order', () => {
    const a = tenantFile('a.yaml', 'a', ['a.test'], 1)
    const b = tenantFile('b.yaml', 'b', ['b.test'], 2)
    const { index, lastGood } = loaded([a, b])
    const changed = [
      { name: 'a.yaml', file: tenantFile('a.yaml', 'a', ['b.test'], 1) },
      { name: 'b.yaml', file: tenantFile('b.yaml', 'b', ['elsewhere.test'], 2) },
    ]
    const { accepted, refused } = admitChanges(index, changed, [], lastGood)
    expect(accepted.map((change) => change.name)).toEqual(['a.yaml', 'b.yaml'])
    expect(refused.size).toBe(0)
    expect(probe(index, tenantFile('c.yaml', 'c', ['b.test'], 3))).toEqual([
      'host "b.test" is also used by tenant "a" (a.yaml:3)',
    ])
  })

  it("refuses a file with problems of its own, with its clashes, and keeps its last good version's claims", () => {
    const a = tenantFile('a.yaml', 'a', ['a.test'], 1)
    const b = tenantFile('b.yaml', 'b', ['b.test'], 2)
    const c = tenantFile('c.yaml', 'c', ['c.test'], 3)
    const { index, lastGood } = loaded([a, b, c])
    // Its first document takes c.test, which c.yaml keeps; its second has no clients.
    const text = `${tenantText('a', ['c.test'], 1)}---\nname: a2\nconfig:\n  hosts: [x.test]\n`
    // b.yaml wants a.test, which the refused a.yaml still holds: refused too.
    const changed = [
      { name: 'a.yaml', file: parseConfigFile('a.yaml', text, PARSE) },
      { name: 'b.yaml', file: tenantFile('b.yaml', 'b', ['a.test'], 2) },
    ]
    const { accepted, refused } = admitChanges(index, changed, [], lastGood)
    expect(accepted).toEqual([])
    expect([...refused.keys()]).toEqual(['a.yaml', 'b.yaml'])
    expect(refused.get('a.yaml')).toEqual([
      'a.yaml:3: config.hosts.0: host "c.test" is also used by tenant "c" (c.yaml:3)',
      'a.yaml:11: config.providers: is required',
      'a.yaml:11: config.clients: is required',
    ])
    expect(refused.get('b.yaml')).toEqual([
      'b.yaml:3: config.hosts.0: host "a.test" is also used by tenant "a" (a.yaml:3)',
    ])
    // Both last good versions hold their claims again.
    expect(probe(index, tenantFile('d.yaml', 'd', ['a.test'], 4))).toHaveLength(1)
    expect(probe(index, tenantFile('d.yaml', 'd', ['b.test'], 4))).toHaveLength(1)
  })

  it('checks the files taken before a clash again once the refused file claims its last good version', () => {
    const a = tenantFile('a.yaml', 'a', ['a.test'], 1)
    const b = tenantFile('b.yaml', 'b', ['b.test'], 2)
    const { index, lastGood } = loaded([a, b])
    // a.yaml is taken with b.test; b.yaml clashes with the new d.yaml and keeps b.test, which
    // a.yaml then may not have: a.yaml is refused in the next pass, and keeps a.test.
    const changed = [
      { name: 'd.yaml', file: tenantFile('d.yaml', 'd', ['d.test'], 4) },
      { name: 'a.yaml', file: tenantFile('a.yaml', 'a', ['b.test'], 1) },
      { name: 'b.yaml', file: tenantFile('b.yaml', 'b', ['d.test'], 2) },
    ]
    const { accepted, refused } = admitChanges(index, changed, [], lastGood)
    expect(accepted.map((change) => change.name)).toEqual(['d.yaml'])
    expect([...refused.keys()]).toEqual(['b.yaml', 'a.yaml'])
    expect(refused.get('a.yaml')).toEqual([
      'a.yaml:3: config.hosts.0: host "b.test" is also used by tenant "b" (b.yaml:3)',
    ])
    expect(probe(index, tenantFile('c.yaml', 'c', ['a.test'], 3))).toHaveLength(1)
  })

  it('undo gives the index back the last good versions of the files taken and removed', () => {
    const a = tenantFile('a.yaml', 'a', ['a.test'], 1)
    const b = tenantFile('b.yaml', 'b', ['b.test'], 2)
    const { index, lastGood } = loaded([a, b])
    const changed = [{ name: 'a.yaml', file: tenantFile('a.yaml', 'a', ['new.test'], 1) }]
    const { undo } = admitChanges(index, changed, ['b.yaml'], lastGood)
    expect(probe(index, tenantFile('c.yaml', 'c', ['b.test'], 3))).toEqual([])
    undo()
    expect(probe(index, tenantFile('c.yaml', 'c', ['a.test'], 3))).toHaveLength(1)
    expect(probe(index, tenantFile('c.yaml', 'c', ['b.test'], 3))).toHaveLength(1)
    expect(probe(index, tenantFile('c.yaml', 'c', ['new.test'], 3))).toEqual([])
  })
})

describe('admitChanges, for any change', () => {
  const POOL = ['h0.test', 'h1.test', 'h2.test', 'h3.test', 'h4.test', 'h5.test']
  const FILES = 5
  const version = (at: number, pool: readonly string[]) =>
    tenantFile(`f${at}.yaml`, `f${at}`, [`own${at}.test`, ...pool], at + 1)

  it('leaves the index holding the files that stay, the refused ones as they were and the ones taken, without a clash', () => {
    fc.assert(
      fc.property(
        // Who holds each pool host before (at most one file), and each file's next hosts if changed.
        fc.array(fc.option(fc.nat(FILES - 1)), { minLength: POOL.length, maxLength: POOL.length }),
        fc.array(fc.option(fc.subarray(POOL)), { minLength: FILES, maxLength: FILES }),
        (owners, next) => {
          const before = Array.from({ length: FILES }, (_, at) =>
            version(
              at,
              POOL.filter((_, host) => owners[host] === at),
            ),
          )
          const { index, lastGood } = loaded(before)
          const changed = next.flatMap((hosts, at) =>
            hosts === null ? [] : [{ name: `f${at}.yaml`, file: version(at, hosts) }],
          )
          const { accepted, refused } = admitChanges(index, changed, [], lastGood)

          const taken = new Set(accepted.map((change) => change.name))
          expect([...taken, ...refused.keys()].sort()).toEqual(changed.map((c) => c.name).sort())
          // The same files admitted afresh, the ones that keep their claims first: no clash.
          const fresh = createConfigIndex(SECRET)
          for (const file of before)
            if (!taken.has(file.file)) expect(fresh.admit(file)).toEqual([])
          for (const { file } of accepted) expect(fresh.admit(file)).toEqual([])
          // And the index holds just what that one holds.
          for (const host of POOL) {
            const probeFile = tenantFile('probe.yaml', 'probe', [host], 99)
            expect(probe(index, probeFile)).toEqual(probe(fresh, probeFile))
          }
        },
      ),
      // Each run parses a dozen files; fewer runs than the default keep the suite quick.
      { numRuns: 40 },
    )
  })
})

describe('readmitLastGood', () => {
  it('gives a refused file its last good version back; what a file taken holds stays with it', () => {
    const a = tenantFile('a.yaml', 'a', ['a.test'], 1)
    const b = tenantFile('b.yaml', 'b', ['b.test'], 2)
    const { index, lastGood } = loaded([a, b])
    // a.yaml gives up a.test, which b.yaml takes; a.yaml then cannot be built.
    const changed = [
      { name: 'a.yaml', file: tenantFile('a.yaml', 'a', ['other.test'], 1) },
      { name: 'b.yaml', file: tenantFile('b.yaml', 'b', ['a.test'], 2) },
    ]
    const { accepted } = admitChanges(index, changed, [], lastGood)
    expect(accepted).toHaveLength(2)
    const clashes = readmitLastGood(index, accepted, new Set(['a.yaml']), lastGood)
    expect(clashes).toEqual([
      {
        name: 'a.yaml',
        problems: ['a.yaml:3: config.hosts.0: host "a.test" is also used by tenant "b" (b.yaml:3)'],
      },
    ])
    expect(probe(index, tenantFile('c.yaml', 'c', ['other.test'], 3))).toEqual([])
  })
})
