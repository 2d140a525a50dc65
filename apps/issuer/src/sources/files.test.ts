import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { Tenant } from '@tessera/config-schema'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFilesSource } from './files.js'
import type { TenantChanges, TenantSource, TenantTarget } from './source.js'

const SECRET = 'files-test-secret-0123456789-abcdef'
const GOOD = 'export default { async authenticate() { return null } }\n'
const BROKEN = "throw new Error('directory unreachable')\n"

const name = (index: number): string => `t${String(index).padStart(2, '0')}`
const clientId = (index: number): string =>
  `${index.toString(16).padStart(8, '0')}-0000-4000-8000-000000000001`

function tenantYaml(
  index: number,
  change: { hosts?: string[]; provider?: string; name?: string } = {},
): string {
  return [
    `name: ${change.name ?? name(index)}`,
    'config:',
    `  hosts: [${(change.hosts ?? [`${name(index)}.test`]).join(', ')}]`,
    `  providers: [${change.provider ?? 'good.mjs'}]`,
    '  clients:',
    `    - client_id: ${clientId(index)}`,
    '      client_secret: client-secret-long',
    '      grant_types: [password]',
    '',
  ].join('\n')
}

/**
 * Stands for the issuer: serves what it is given, all or nothing per call, and throws for a
 * tenant whose provider script throws on import (it reads the script, it does not run it).
 */
function fakeTarget() {
  const served = new Map<string, Tenant>()
  const calls: TenantChanges[] = []
  const build = (tenants: readonly Tenant[]): void => {
    for (const tenant of tenants) {
      for (const script of tenant.providers) {
        if (readFileSync(script, 'utf8').startsWith('throw')) {
          throw new Error(`provider script ${script} threw on import: directory unreachable`)
        }
      }
    }
  }
  const target: TenantTarget = {
    replaceAll(tenants) {
      build(tenants)
      served.clear()
      for (const tenant of tenants) served.set(tenant.name, tenant)
      return Promise.resolve()
    },
    update(changes) {
      calls.push(changes)
      build(changes.put)
      for (const name of changes.remove) served.delete(name)
      for (const tenant of changes.put) served.set(tenant.name, tenant)
      return Promise.resolve()
    },
  }
  return { target, served, calls }
}

interface LogLine {
  msg: string
  files?: string[]
  file?: string
  tenants?: string[]
  problems?: string[]
}

describe('the files source, when some changed tenants cannot be built', () => {
  let dir: string
  let lines: LogLine[]
  let source: TenantSource | undefined
  const file = (index: number): string => join(dir, `${name(index)}.yaml`)
  const logged = (msg: string): LogLine[] => lines.filter((line) => line.msg.startsWith(msg))

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-files-'))
    writeFileSync(join(dir, 'good.mjs'), GOOD)
    writeFileSync(join(dir, 'broken.mjs'), BROKEN)
    lines = []
  })
  afterEach(async () => {
    await source?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  async function start(count: number) {
    for (let index = 0; index < count; index++) writeFileSync(file(index), tenantYaml(index))
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line !== '') lines.push(JSON.parse(line) as LogLine)
        }
        done()
      },
    })
    const fake = fakeTarget()
    source = createFilesSource({
      path: dir,
      env: {},
      jwtSecret: SECRET,
      logger: pino(sink),
      watch: false,
    })
    await source.start(fake.target)
    return { ...fake, source }
  }

  it('refuses only the file that fails among 64, in about 2·log2(64) update calls', async () => {
    const { served, calls, source } = await start(64)
    const before = served.get(name(41))
    for (let index = 0; index < 64; index++) {
      writeFileSync(
        file(index),
        tenantYaml(index, {
          hosts: [`${name(index)}.test`, `new-${name(index)}.test`],
          ...(index === 41 ? { provider: 'broken.mjs' } : {}),
        }),
      )
    }

    expect(await source.reload()).toBe(false)
    for (let index = 0; index < 64; index++) {
      if (index === 41) continue
      expect(served.get(name(index))?.hosts).toEqual([
        `${name(index)}.test`,
        `new-${name(index)}.test`,
      ])
    }
    expect(served.get(name(41))).toBe(before)
    expect(calls.length).toBeLessThanOrEqual(2 * Math.log2(64) + 2)
    const [refusal, ...more] = logged('configuration reload refused in part')
    expect(more).toEqual([])
    expect(refusal).toMatchObject({ files: ['t41.yaml'], tenants: [name(41)] })
    expect(refusal?.problems).toEqual([
      `provider script ${join(dir, 'broken.mjs')} threw on import: directory unreachable`,
    ])
    expect(logged('configuration reloaded')).toHaveLength(1)

    // The refused file's last good version keeps its claims: another file cannot take its host,
    // and the hosts its refused version named are free.
    writeFileSync(file(3), tenantYaml(3, { hosts: ['t41.test', 'new-t41.test'] }))
    expect(await source.reload()).toBe(false)
    expect(logged('configuration refused in part').at(-1)?.problems).toContainEqual(
      expect.stringMatching(
        /t03\.yaml:3: config\.hosts\.0: host "t41\.test" is also used by tenant "t41"/,
      ),
    )
    expect(served.get(name(3))?.hosts).toEqual(['t03.test', 'new-t03.test'])

    // Fixed, it is taken.
    writeFileSync(file(3), tenantYaml(3))
    writeFileSync(file(41), tenantYaml(41, { hosts: ['t41.test', 'fixed.test'] }))
    expect(await source.reload()).toBe(true)
    expect(served.get(name(41))?.hosts).toEqual(['t41.test', 'fixed.test'])
  })

  it('finds the failing file wherever it is, and several of them', async () => {
    const counts: Record<string, number> = {}
    for (const broken of [[0], [31], [63], [5, 50]]) {
      const { served, calls, source } = await start(64)
      for (const index of broken) {
        writeFileSync(file(index), tenantYaml(index, { provider: 'broken.mjs' }))
      }
      writeFileSync(file(10), tenantYaml(10, { hosts: ['t10.test', 'ten.test'] }))
      calls.length = 0
      expect(await source.reload()).toBe(false)
      counts[broken.join(',')] = calls.length
      expect(served.get(name(10))?.hosts).toEqual(['t10.test', 'ten.test'])
      for (const index of broken)
        expect(served.get(name(index))?.providers).toEqual([join(dir, 'good.mjs')])
      expect(logged('configuration reload refused in part').flatMap((line) => line.files)).toEqual(
        broken.map((index) => `${name(index)}.yaml`),
      )
      expect(calls.length).toBeLessThanOrEqual(broken.length * (2 * Math.log2(64) + 2))
      await source.close()
      lines = []
    }
    // One failing file among 64: at most 2·log2(64)+1 calls.
    expect(counts['0']).toBeLessThanOrEqual(13)
    expect(counts['31']).toBeLessThanOrEqual(13)
    expect(counts['63']).toBeLessThanOrEqual(13)
  })

  it('gives a host to the file taken when the refused file it left cannot be built', async () => {
    const { served, source } = await start(3)
    writeFileSync(
      file(0),
      tenantYaml(0, { hosts: ['t00.test', 'moving.test'], provider: 'good.mjs' }),
    )
    expect(await source.reload()).toBe(true)

    // In one change the host moves from tenant 0 to tenant 1, and tenant 0 cannot be built.
    writeFileSync(file(0), tenantYaml(0, { provider: 'broken.mjs' }))
    writeFileSync(file(1), tenantYaml(1, { hosts: ['t01.test', 'moving.test'] }))
    expect(await source.reload()).toBe(false)
    expect(served.get(name(1))?.hosts).toEqual(['t01.test', 'moving.test'])
    expect(served.get(name(0))?.hosts).toEqual(['t00.test', 'moving.test'])
    const clash = logged('configuration reload refused in part: the last good version')
    expect(clash).toHaveLength(1)
    expect(clash[0]).toMatchObject({ file: 't00.yaml' })
    expect(clash[0]?.problems).toEqual([
      expect.stringMatching(
        /t00\.yaml:3: config\.hosts\.1: host "moving\.test" is also used by tenant "t01"/,
      ),
    ])

    // The host is tenant 1's: a third file cannot take it, tenant 0's other host stays claimed.
    writeFileSync(file(2), tenantYaml(2, { hosts: ['t02.test', 'moving.test'] }))
    expect(await source.reload()).toBe(false)
    expect(served.get(name(2))?.hosts).toEqual(['t02.test'])
    writeFileSync(file(2), tenantYaml(2, { hosts: ['t02.test', 't00.test'] }))
    expect(await source.reload()).toBe(false)
    expect(served.get(name(2))?.hosts).toEqual(['t02.test'])

    // Tenant 0 fixed, without the host: taken, and nothing clashes.
    writeFileSync(file(2), tenantYaml(2))
    writeFileSync(file(0), tenantYaml(0))
    lines = []
    expect(await source.reload()).toBe(true)
    expect(served.get(name(0))?.hosts).toEqual(['t00.test'])
    expect(logged('configuration reload refused')).toEqual([])
  })

  it('moves a tenant between two files only when both can be built', async () => {
    const { served, source } = await start(3)
    // Tenant t00 moves from file 0 to file 1, whose other tenant cannot be built.
    const moved = tenantYaml(0)
    unlinkSync(file(0))
    writeFileSync(file(1), `${tenantYaml(1, { provider: 'broken.mjs' })}---\n${moved}`)
    writeFileSync(file(2), tenantYaml(2, { hosts: ['t02.test', 'two.test'] }))
    expect(await source.reload()).toBe(false)
    expect([...served.keys()].sort()).toEqual([name(0), name(1), name(2)])
    expect(served.get(name(1))?.providers).toEqual([join(dir, 'good.mjs')])
    expect(served.get(name(2))?.hosts).toEqual(['t02.test', 'two.test'])
    const [refusal] = logged('configuration reload refused in part')
    expect(refusal?.files?.sort()).toEqual(['t00.yaml', 't01.yaml'])

    // Once file 1 builds, the move is taken.
    writeFileSync(file(1), `${tenantYaml(1)}---\n${moved}`)
    expect(await source.reload()).toBe(true)
    expect([...served.keys()].sort()).toEqual([name(0), name(1), name(2)])
  })

  it('refuses together every file of a chain of moves, and nothing else', async () => {
    const { served, source } = await start(5)
    const before = new Map(served)
    // t00 moves to file 1, t01 to file 2, t02 to file 3 whose own tenant cannot be built; file 0
    // names a new tenant, and file 4 goes.
    writeFileSync(file(0), tenantYaml(4, { name: 'extra', hosts: ['extra.test'] }))
    writeFileSync(file(1), tenantYaml(0))
    writeFileSync(file(2), tenantYaml(1))
    writeFileSync(file(3), `${tenantYaml(3, { provider: 'broken.mjs' })}---\n${tenantYaml(2)}`)
    unlinkSync(file(4))
    expect(await source.reload()).toBe(false)
    expect(logged('configuration reload refused in part').map((line) => line.files)).toEqual([
      ['t00.yaml', 't01.yaml', 't02.yaml', 't03.yaml'],
    ])
    for (const index of [0, 1, 2, 3]) expect(served.get(name(index))).toBe(before.get(name(index)))
    expect(served.has(name(4))).toBe(false)
    expect(served.has('extra')).toBe(false)
  })

  it('does not take a removal whose replacement cannot be built when it would leave no tenant', async () => {
    const { served, source } = await start(1)
    unlinkSync(file(0))
    writeFileSync(file(1), tenantYaml(1, { provider: 'broken.mjs' }))
    expect(await source.reload()).toBe(false)
    expect([...served.keys()]).toEqual([name(0)])
    const refusals = logged('configuration reload refused')
    expect(refusals.map((line) => line.problems?.[0])).toEqual([
      expect.stringContaining('threw on import'),
      'no tenant would be left',
    ])
    // Nothing was taken: said as a refusal of the whole reload, not as a reload.
    expect(refusals[0]?.msg).toBe(
      'configuration reload refused: the changed tenants could not be built; still serving their previous versions',
    )
    expect(logged('configuration reloaded')).toEqual([])
  })

  it('on reload(), rebuilds every tenant but the one whose provider script now throws', async () => {
    const { served, calls, source } = await start(8)
    writeFileSync(file(5), tenantYaml(5, { provider: 'own.mjs' }))
    writeFileSync(join(dir, 'own.mjs'), GOOD)
    expect(await source.reload()).toBe(true)
    const before = new Map(served)

    writeFileSync(join(dir, 'own.mjs'), BROKEN)
    calls.length = 0
    expect(await source.reload()).toBe(false)
    const rebuilt = calls.filter((call) => call.freshProviders === true).length
    expect(rebuilt).toBe(calls.length)
    expect(served.get(name(5))).toBe(before.get(name(5)))
    const [refusal] = logged('configuration reload refused in part')
    expect(refusal).toMatchObject({ files: ['t05.yaml'], tenants: [name(5)] })
    // Every other tenant was in a call that was taken.
    const taken = new Set<string>()
    for (const call of calls) {
      if (!call.put.some((tenant) => tenant.name === name(5))) {
        for (const tenant of call.put) taken.add(tenant.name)
      }
    }
    expect([...taken].sort()).toEqual([0, 1, 2, 3, 4, 6, 7].map(name))
  })
})
