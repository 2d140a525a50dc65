import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type * as ConfigSchema from '@tessera/config-schema'
import type { Tenant } from '@tessera/config-schema'
import { pino } from 'pino'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { TenantChanges, TenantTarget } from '../source.js'
import type { Resource } from './resources.js'
import { BATCH_SIZE, createTenantSet } from './tenants.js'

// How much of the other tenants the rules look at: every document checked (by parseConfig or
// alone) and every unit admitted to an index. Quadratic work shows in these counts, whatever
// the machine's speed.
const looked = vi.hoisted(() => ({ documents: 0, admitted: 0 }))
vi.mock('@tessera/config-schema', async (importOriginal) => {
  const actual = await importOriginal<typeof ConfigSchema>()
  return {
    ...actual,
    parseConfig: (...args: Parameters<typeof actual.parseConfig>) => {
      looked.documents += args[0].length
      return actual.parseConfig(...args)
    },
    parseConfigDocument: (...args: Parameters<typeof actual.parseConfigDocument>) => {
      looked.documents += 1
      return actual.parseConfigDocument(...args)
    },
    createConfigIndex: (jwtSecret: string | undefined): ConfigSchema.ConfigIndex => {
      const index = actual.createConfigIndex(jwtSecret)
      return {
        admit(file) {
          looked.admitted += 1
          return index.admit(file)
        },
        release: (file) => index.release(file),
      }
    },
  }
})

const SECRET = 'tenants-test-secret-0123456789-abcdef'

let providerDirectory: string
beforeAll(() => {
  providerDirectory = mkdtempSync(join(tmpdir(), 'tessera-tenants-'))
  writeFileSync(join(providerDirectory, 'users.mjs'), 'export default {}\n')
})
afterAll(() => rmSync(providerDirectory, { recursive: true, force: true }))
beforeEach(() => {
  looked.documents = 0
  looked.admitted = 0
})

/** Tenant `index`, created `index` seconds after the first, at its own host unless told. */
function resource(index: number, host = `t${index}.test`, resourceVersion = '1'): Resource {
  return {
    apiVersion: 'tessera.dev/v1',
    kind: 'Tenant',
    metadata: {
      name: `t${index}`,
      resourceVersion,
      creationTimestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, index)).toISOString(),
    },
    spec: {
      hosts: [host],
      providers: ['users.mjs'],
      clients: [
        {
          client_id: `eeeeeeee-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
          client_secret: 's'.repeat(16),
          grant_types: ['password'],
        },
      ],
    },
  }
}

/**
 * A target that records what it is asked to build, and refuses to build the tenants named in
 * `broken` (as a provider script that throws would), in a batch or alone.
 */
function fakeTarget(broken: ReadonlySet<string> = new Set()) {
  const served = new Map<string, Tenant>()
  // fresh: builds that asked for provider scripts imported afresh; removed: names per removal.
  const calls = { update: 0, built: 0, fresh: 0, removed: [] as number[] }
  const build = (tenants: readonly Tenant[]) => {
    calls.built += tenants.length
    const bad = tenants.find((tenant) => broken.has(tenant.name))
    if (bad !== undefined) throw new Error(`provider script failed to load: ${bad.name}`)
  }
  const target: TenantTarget = {
    replaceAll: () => Promise.reject(new Error('not used by the kubernetes source')),
    update(changes: TenantChanges) {
      calls.update++
      if (changes.freshProviders === true) calls.fresh++
      if (changes.remove.length > 0) calls.removed.push(changes.remove.length)
      build(changes.put)
      for (const tenant of changes.put) served.set(tenant.name, tenant)
      for (const name of changes.remove) served.delete(name)
      return Promise.resolve()
    },
  }
  return { target, served, calls }
}

function tenantSet() {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>)
      done()
    },
  })
  const set = createTenantSet({
    namespace: 'tenants',
    logger: pino({ level: 'info' }, sink),
    providerDirectory,
    env: {},
    jwtSecret: SECRET,
  })
  const refusals = () =>
    lines.filter((line) => String(line.msg).startsWith('Tenant resource refused'))
  return { set, lines, refusals }
}

describe('createTenantSet at scale', () => {
  it('checks each of N listed resources once against an index, and builds them in batches', async () => {
    const count = 2 * BATCH_SIZE + 7
    const { set, refusals } = tenantSet()
    const { target, served, calls } = fakeTarget()
    set.attach(target)
    await set.applyList(Array.from({ length: count }, (_, index) => resource(index)))

    expect(served.size).toBe(count)
    expect(set.served()).toHaveLength(count)
    expect(refusals()).toEqual([])
    // Each resource is checked alone once, and admitted a bounded number of times (checked,
    // then served): linear. Checking each against all the tenants served before it, as
    // parseConfig over every served document did, looks at count² / 2 documents.
    expect(looked.documents).toBe(count)
    expect(looked.admitted).toBeLessThanOrEqual(2 * count)
    expect(calls).toEqual({ update: 3, built: count, fresh: 0, removed: [] })

    // One watch event checks the one resource, not the others.
    looked.documents = 0
    looked.admitted = 0
    await set.applyEvent('MODIFIED', resource(5, 'moved.test', '2'))
    // Checked in place of its served version (which is admitted back), then served.
    expect(looked).toEqual({ documents: 1, admitted: 3 })
    expect(served.get('t5')?.hosts).toEqual(['moved.test'])
  })

  it('refuses the later of two resources claiming one host, and serves it once the earlier is deleted', async () => {
    const { set, refusals } = tenantSet()
    const { target, served } = fakeTarget()
    set.attach(target)
    // t900 is created after t3 and claims its host; t901 claims the host t900 would have had.
    const items = Array.from({ length: 1000 }, (_, index) =>
      index === 900 ? resource(900, 't3.test') : resource(index),
    )
    await set.applyList(items.reverse())

    expect(served.size).toBe(999)
    expect(served.get('t3')?.hosts).toEqual(['t3.test'])
    expect(served.has('t900')).toBe(false)
    expect(refusals()).toEqual([
      expect.objectContaining({
        tenant: 't900',
        problems: [
          'kubernetes:tenants/t900: spec.hosts.0: host "t3.test" is also used by tenant "t3" (kubernetes:tenants/t3)',
        ],
      }),
    ])

    // Once t3 is deleted its host is free, and t900 is served without a change of its own.
    await set.applyEvent('DELETED', resource(3))
    expect(served.get('t900')?.hosts).toEqual(['t3.test'])
    expect(served.has('t3')).toBe(false)
    expect(refusals()).toHaveLength(1)
  })

  it('finds the one tenant of a batch that cannot be built; what it would have held goes to a later one', async () => {
    const { set, refusals, lines } = tenantSet()
    const { target, served, calls } = fakeTarget(new Set(['t40']))
    set.attach(target)
    // t41 claims t40's host: as each was tried in turn, t40 is not built and holds nothing.
    const items = Array.from({ length: 100 }, (_, index) =>
      index === 41 ? resource(41, 't40.test') : resource(index),
    )
    await set.applyList(items)

    expect(served.size).toBe(99)
    expect(served.has('t40')).toBe(false)
    expect(served.get('t41')?.hosts).toEqual(['t40.test'])
    expect(refusals()).toEqual([
      expect.objectContaining({
        tenant: 't40',
        problems: ['provider script failed to load: t40'],
      }),
    ])
    // Halves, not one build per tenant: the failing batch is split about log2(100) times.
    expect(calls.update).toBeLessThan(20)
    expect(lines.filter((line) => line.msg === 'Tenant added')).toHaveLength(99)

    // A build failure is not retried on other tenants' events, and nothing is built again.
    const built = calls.built
    await set.applyEvent('ADDED', resource(100))
    expect(calls.built).toBe(built + 1)
    expect(refusals()).toHaveLength(1)
  })

  it('imports provider scripts afresh to retry a build failure, on a relist', async () => {
    const { set, refusals } = tenantSet()
    const { target, served, calls } = fakeTarget(new Set(['t7']))
    set.attach(target)
    const items = Array.from({ length: 2 * BATCH_SIZE + 7 }, (_, index) => resource(index))
    await set.applyList(items)
    await set.applyEvent('ADDED', resource(5000))
    expect(served.has('t7')).toBe(false)
    expect(calls.fresh).toBe(0)

    // Tried again with fresh scripts (a fixed script must not meet Node's cached failure), once
    // for the whole relist; refused the same way, it is not logged again.
    await set.applyList([...items, resource(5000)])
    expect(calls.fresh).toBe(1)
    expect(served.has('t7')).toBe(false)
    expect(refusals()).toHaveLength(1)
  })

  it('imports provider scripts afresh once per rebuild, not per batch or per event', async () => {
    const count = 2 * BATCH_SIZE + 7
    const { set } = tenantSet()
    const { target, served, calls } = fakeTarget()
    set.attach(target)
    const items = Array.from({ length: count }, (_, index) => resource(index))
    await set.applyList(items)
    await set.applyEvent('MODIFIED', resource(5, 'moved.test', '2'))
    await set.applyEvent('ADDED', resource(count))
    expect(served.size).toBe(count + 1)
    expect(calls.fresh).toBe(0)

    // The provider directory changed (or SIGHUP): every tenant rebuilt, in batches, one fresh
    // import of the scripts for all of them.
    const updates = calls.update
    expect(await set.rebuildAll()).toBe(true)
    expect(calls.update).toBe(updates + 3)
    expect(calls.fresh).toBe(1)
  })

  it('removes the tenants a relist no longer holds in one change', async () => {
    const { set, lines } = tenantSet()
    const { target, served, calls } = fakeTarget()
    set.attach(target)
    const items = Array.from({ length: 1000 }, (_, index) => resource(index))
    await set.applyList(items)
    await set.applyList(items.filter((_, index) => index % 2 === 0))

    expect(served.size).toBe(500)
    expect(served.has('t1')).toBe(false)
    expect(calls.removed).toEqual([500])
    expect(lines.filter((line) => line.msg === 'Tenant removed')).toHaveLength(500)
    // What the removed tenants claimed is free again.
    await set.applyEvent('ADDED', {
      ...resource(2000, 't1.test'),
      metadata: { name: 'late', resourceVersion: '1' },
    })
    expect(served.get('late')?.hosts).toEqual(['t1.test'])
  })

  it('checks a refused resource again only once some claim has been given up', async () => {
    const { set, refusals } = tenantSet()
    const { target, served } = fakeTarget()
    set.attach(target)
    const items = Array.from({ length: 100 }, (_, index) =>
      index === 90 ? resource(90, 't3.test') : resource(index),
    )
    await set.applyList(items)
    expect(served.has('t90')).toBe(false)

    // A new tenant gives nothing up: only it is checked, not the refused t90.
    looked.documents = 0
    await set.applyEvent('ADDED', resource(100))
    expect(looked.documents).toBe(1)
    expect(served.has('t100')).toBe(true)

    // t3 moves to another host: t90 is checked again, and served.
    looked.documents = 0
    await set.applyEvent('MODIFIED', resource(3, 'elsewhere.test', '2'))
    expect(looked.documents).toBe(2)
    expect(served.get('t90')?.hosts).toEqual(['t3.test'])
    expect(refusals()).toHaveLength(1)
  })
})
