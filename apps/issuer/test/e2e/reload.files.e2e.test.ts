import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFilesSource } from '../../src/sources/files.js'
import type { TenantRuntime } from '../../src/tenants/runtime.js'
import { eventually } from '../support/eventually.js'
import { postForm } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

// Enough files that reading them all is clearly slower than reading one, few enough to start in
// a couple of seconds on a busy machine.
const COUNT = 3000
const PROVIDER = `export default {
  async authenticate({ username, password }) {
    return username === 'alice' && password === 'alice-password' ? { sub: 'alice' } : null
  },
}
`

const name = (index: number): string => `t${String(index).padStart(4, '0')}`
const host = (index: number): string => `${name(index)}.test`
const clientId = (index: number): string =>
  `${index.toString(16).padStart(8, '0')}-0000-4000-8000-000000000001`

/** Tenant `index`'s file; `hosts` and `clientId` replace its own. */
function tenantYaml(index: number, change: { hosts?: string[]; clientId?: string } = {}): string {
  return [
    `name: ${name(index)}`,
    'config:',
    `  hosts: [${(change.hosts ?? [host(index)]).join(', ')}]`,
    '  providers: [../users.provider.mjs]',
    '  clients:',
    `    - client_id: ${change.clientId ?? clientId(index)}`,
    '      client_secret: client-secret-long',
    '      grant_types: [password]',
    '',
  ].join('\n')
}

function passwordToken(url: string, index: number, at = host(index)) {
  return postForm(url, at, {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_id: clientId(index),
    client_secret: 'client-secret-long',
  })
}

/** An issuer on SQLite in `dir`, serving the tenant files under `config` and watching them. */
function startWatching(dir: string, config: string): Promise<InProcessIssuer> {
  return startIssuer({
    databaseUrl: `sqlite:${dir}/tessera.db`,
    config,
    source: ({ settings, logger, env }) =>
      createFilesSource({ path: config, env, jwtSecret: settings.jwtSecret, logger, watch: true }),
  })
}

/** The tenants `issuer` serves, by name. */
function runtimesOf(issuer: InProcessIssuer): Map<string, TenantRuntime> {
  return new Map(issuer.issuer.registry.all().map((runtime) => [runtime.tenant.name, runtime]))
}

/** The log lines from `from` on, parsed. */
function entries(issuer: InProcessIssuer, from: number): { msg: string; time: number }[] {
  return issuer.logs.slice(from).map((line) => JSON.parse(line) as { msg: string; time: number })
}

describe('reloading tenant files one by one, among thousands', () => {
  let tmp: ReturnType<typeof tempDir>
  let config: string
  const file = (index: number): string => join(config, 'tenants', `${name(index)}.yaml`)
  beforeAll(() => {
    tmp = tempDir()
    config = join(tmp.dir, 'config')
    mkdirSync(join(config, 'tenants'), { recursive: true })
    writeFileSync(join(config, 'users.provider.mjs'), PROVIDER)
    for (let index = 0; index < COUNT; index++) writeFileSync(file(index), tenantYaml(index))
    // Tenant 2 starts with a second host, which moves to tenant 3 below.
    writeFileSync(file(2), tenantYaml(2, { hosts: [host(2), 'moving.test'] }))
  })
  afterAll(() => tmp.remove())

  it('re-reads only the changed files and swaps only their tenants', async () => {
    const started = performance.now()
    const issuer = await startWatching(tmp.dir, config)
    const fullLoadMs = performance.now() - started
    const runtimes = (): Map<string, TenantRuntime> => runtimesOf(issuer)
    /** Writes, then waits for the reload and answers how long it took, from its log lines. */
    const change = async (write: () => void): Promise<number> => {
      const mark = issuer.logs.length
      write()
      return eventually(() => {
        const lines = entries(issuer, mark)
        const began = lines.find((line) => line.msg.includes('changed on disk: reloading'))
        const done = lines.find((line) => line.msg === 'configuration reloaded')
        expect(began).toBeDefined()
        expect(done).toBeDefined()
        return done!.time - began!.time
      })
    }
    try {
      expect(issuer.issuer.registry.all()).toHaveLength(COUNT)
      expect((await passwordToken(issuer.url, 1, 'new.test')).status).toBe(404)

      // One file changes: a new host for tenant 1.
      const before = runtimes()
      const reloadMs = await change(() =>
        writeFileSync(file(1), tenantYaml(1, { hosts: [host(1), 'new.test'] })),
      )
      const after = runtimes()
      expect(after.size).toBe(COUNT)
      const swapped = [...after].filter(([tenant, runtime]) => before.get(tenant) !== runtime)
      expect(swapped.map(([tenant]) => tenant)).toEqual([name(1)])
      expect((await passwordToken(issuer.url, 1, 'new.test')).status).toBe(200)
      expect((await passwordToken(issuer.url, 1)).status).toBe(200)
      // Proportional to the files changed, not to the 3,000: the full load read them all.
      expect(reloadMs * 10).toBeLessThan(fullLoadMs)

      // In one change: tenant 4's file turns invalid, tenant 5's gains a host, tenant 6's file
      // goes, and the host of tenant 2 moves to tenant 3.
      const mark = issuer.logs.length
      const kept = runtimes()
      await change(() => {
        writeFileSync(
          file(4),
          tenantYaml(4, { hosts: [host(4), 'refused.test'], clientId: 'not-a-uuid' }),
        )
        writeFileSync(file(5), tenantYaml(5, { hosts: [host(5), 'five.test'] }))
        rmSync(file(6))
        writeFileSync(file(2), tenantYaml(2))
        writeFileSync(file(3), tenantYaml(3, { hosts: [host(3), 'moving.test'] }))
      })
      const now = runtimes()
      // The invalid file: its tenant keeps its last good version, and the problem is logged with
      // its file and line.
      expect(now.get(name(4))).toBe(kept.get(name(4)))
      expect((await passwordToken(issuer.url, 4)).status).toBe(200)
      expect((await passwordToken(issuer.url, 4, 'refused.test')).status).toBe(404)
      const logged = issuer.logs.slice(mark).join('\n')
      expect(logged).toContain('configuration refused in part')
      expect(logged).toMatch(
        /tenants\/t0004\.yaml:6: config\.clients\.0\.client_id: must be a UUID/,
      )
      // The other changes are taken.
      expect((await passwordToken(issuer.url, 5, 'five.test')).status).toBe(200)
      expect(now.has(name(6))).toBe(false)
      expect((await passwordToken(issuer.url, 6)).status).toBe(404)
      expect(issuer.issuer.registry.byHost('moving.test')?.tenant.name).toBe(name(3))
      expect((await passwordToken(issuer.url, 3, 'moving.test')).status).toBe(200)
      // Tenant 2's client is unknown at the host's new tenant.
      expect((await passwordToken(issuer.url, 2, 'moving.test')).status).toBe(401)
      expect((await passwordToken(issuer.url, 2)).status).toBe(200)
      const changed = [...now].filter(([tenant, runtime]) => kept.get(tenant) !== runtime)
      expect(changed.map(([tenant]) => tenant).sort()).toEqual([name(2), name(3), name(5)])
      expect(now.size).toBe(COUNT - 1)

      // Fixed, the file is taken.
      await change(() => writeFileSync(file(4), tenantYaml(4, { hosts: [host(4), 'four.test'] })))
      expect((await passwordToken(issuer.url, 4, 'four.test')).status).toBe(200)

      // A new folder with a new tenant in it.
      await change(() => {
        mkdirSync(join(config, 'tenants', 'more'))
        const yaml = tenantYaml(COUNT).replace('../users', '../../users')
        writeFileSync(join(config, 'tenants', 'more', 'new.yaml'), yaml)
      })
      expect((await passwordToken(issuer.url, COUNT)).status).toBe(200)
      // ...and a change inside it, seen by the folder's own watcher.
      await change(() =>
        writeFileSync(
          join(config, 'tenants', 'more', 'new.yaml'),
          tenantYaml(COUNT, { hosts: [host(COUNT), 'more.test'] }).replace(
            '../users',
            '../../users',
          ),
        ),
      )
      expect((await passwordToken(issuer.url, COUNT, 'more.test')).status).toBe(200)

      // SIGHUP re-reads every file and rebuilds every tenant, provider scripts imported afresh.
      const beforeHangup = runtimes()
      expect(await issuer.issuer.reload()).toBe(true)
      const afterHangup = runtimes()
      expect(afterHangup.size).toBe(COUNT)
      expect([...afterHangup].some(([tenant, rt]) => beforeHangup.get(tenant) === rt)).toBe(false)
      expect((await passwordToken(issuer.url, 4, 'four.test')).status).toBe(200)
    } finally {
      await issuer.close()
    }
  })
})

describe('reloading a ConfigMap volume', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('reads the files again when the volume swaps its ..data link', async () => {
    // The layout the kubelet makes: each key a link through ..data to a folder named for the
    // time, swapped in one rename on an update.
    const volume = join(tmp.dir, 'volume')
    const version = (stamp: string, hosts: Record<number, string[]>, provider = PROVIDER): void => {
      const folder = join(volume, `..${stamp}`)
      mkdirSync(folder, { recursive: true })
      writeFileSync(join(folder, 'users.provider.mjs'), provider)
      for (const index of [0, 1, 2]) {
        writeFileSync(
          join(folder, `${name(index)}.yaml`),
          tenantYaml(index, { hosts: hosts[index] ?? [host(index)] }).replace('../users', 'users'),
        )
      }
      symlinkSync(`..${stamp}`, join(volume, '..data_tmp'))
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'))
    }
    version('2024_01_01', {})
    for (const file of ['users.provider.mjs', ...[0, 1, 2].map((i) => `${name(i)}.yaml`)]) {
      symlinkSync(join('..data', file), join(volume, file))
    }
    const issuer = await startWatching(tmp.dir, volume)
    try {
      const before = issuer.issuer.registry.byHost(host(0))
      expect((await passwordToken(issuer.url, 1, 'swapped.test')).status).toBe(404)
      version('2024_01_02', { 1: [host(1), 'swapped.test'] })
      await eventually(async () => {
        expect((await passwordToken(issuer.url, 1, 'swapped.test')).status).toBe(200)
      })
      // The unchanged tenants were read again (their files are new inodes) and left as they were.
      expect(issuer.issuer.registry.byHost(host(0))).toBe(before)

      // A new version of the provider script: every tenant using it takes it, imported afresh.
      version(
        '2024_01_03',
        { 1: [host(1), 'swapped.test'] },
        PROVIDER.replace('alice-password', 'changed'),
      )
      await eventually(async () => {
        expect((await passwordToken(issuer.url, 0)).status, issuer.logs.join('\n')).toBe(400)
      })
      expect(issuer.issuer.registry.byHost(host(0))).not.toBe(before)
    } finally {
      await issuer.close()
    }
  })
})

describe('reloading tenant files when some tenants cannot be built', () => {
  let tmp: ReturnType<typeof tempDir>
  let config: string
  const file = (index: number): string => join(config, 'tenants', `${name(index)}.yaml`)
  const BROKEN = "throw new Error('directory unreachable')\n"
  beforeAll(() => {
    tmp = tempDir()
    config = join(tmp.dir, 'config')
    mkdirSync(join(config, 'tenants'), { recursive: true })
    writeFileSync(join(config, 'users.provider.mjs'), PROVIDER)
    writeFileSync(join(config, 'broken.provider.mjs'), BROKEN)
    writeFileSync(join(config, 'own.provider.mjs'), PROVIDER)
    for (let index = 0; index < 5; index++) writeFileSync(file(index), tenantYaml(index))
    writeFileSync(file(4), tenantYaml(4).replace('users.provider', 'own.provider'))
  })
  afterAll(() => tmp.remove())

  it('takes the files that build and keeps the last good version of the one that does not', async () => {
    const issuer = await startWatching(tmp.dir, config)
    const runtimes = (): Map<string, TenantRuntime> => runtimesOf(issuer)
    const lines = (from: number) =>
      entries(issuer, from) as (ReturnType<typeof entries>[number] & {
        files?: string[]
        tenants?: string[]
        problems?: string[]
      })[]
    try {
      // Three files change at once; the third names a provider script that throws on import.
      const before = runtimes()
      const mark = issuer.logs.length
      writeFileSync(file(0), tenantYaml(0, { hosts: [host(0), 'zero.test'] }))
      writeFileSync(file(1), tenantYaml(1, { hosts: [host(1), 'one.test'] }))
      writeFileSync(
        file(2),
        tenantYaml(2, { hosts: [host(2), 'two.test'] }).replace(
          'users.provider',
          'broken.provider',
        ),
      )
      const refusal = await eventually(() => {
        const found = lines(mark).find((line) =>
          line.msg.startsWith('configuration reload refused in part'),
        )
        expect(found).toBeDefined()
        expect(lines(mark).some((line) => line.msg === 'configuration reloaded')).toBe(true)
        return found!
      })
      expect(refusal.files).toEqual([join('tenants', 't0002.yaml')])
      expect(refusal.problems).toEqual([
        `${join(config, 'broken.provider.mjs')}: provider script failed to load: directory unreachable`,
      ])
      expect((await passwordToken(issuer.url, 0, 'zero.test')).status).toBe(200)
      expect((await passwordToken(issuer.url, 1, 'one.test')).status).toBe(200)
      expect((await passwordToken(issuer.url, 2, 'two.test')).status).toBe(404)
      expect((await passwordToken(issuer.url, 2)).status).toBe(200)
      expect(runtimes().get(name(2))).toBe(before.get(name(2)))

      // A provider script changes to throw on import: the tenant using it keeps its build.
      const kept = runtimes().get(name(4))
      const scriptMark = issuer.logs.length
      writeFileSync(join(config, 'own.provider.mjs'), BROKEN)
      await eventually(() => {
        expect(lines(scriptMark).map((line) => line.msg)).toContain(
          'configuration reload refused: the changed tenants could not be built; still serving their previous versions',
        )
      })
      expect(runtimes().get(name(4))).toBe(kept)
      expect((await passwordToken(issuer.url, 4)).status).toBe(200)

      // The other script loads now; no served tenant uses it, so every tenant is rebuilt, each
      // alone when together they fail: all but tenant 4.
      const fixMark = issuer.logs.length
      writeFileSync(join(config, 'broken.provider.mjs'), PROVIDER)
      await eventually(() => {
        expect(lines(fixMark).map((line) => line.msg)).toContain('configuration reloaded')
      })
      expect(
        lines(fixMark).find((line) => line.msg.startsWith('configuration reload refused in part')),
      ).toMatchObject({ tenants: [name(4)] })
      expect(runtimes().get(name(4))).toBe(kept)

      // SIGHUP re-reads every file: tenant 2 is taken in its new version, every tenant but 4 is
      // rebuilt, and tenant 4 keeps serving.
      const beforeHangup = runtimes()
      const hangupMark = issuer.logs.length
      expect(await issuer.issuer.reload()).toBe(false)
      const afterHangup = runtimes()
      expect(afterHangup.get(name(4))).toBe(kept)
      for (const tenant of [0, 1, 2, 3].map(name)) {
        expect(afterHangup.get(tenant)).not.toBe(beforeHangup.get(tenant))
      }
      expect((await passwordToken(issuer.url, 4)).status).toBe(200)
      expect((await passwordToken(issuer.url, 2, 'two.test')).status).toBe(200)
      const hangupRefusal = lines(hangupMark).find((line) =>
        line.msg.startsWith('configuration reload refused in part'),
      )
      expect(hangupRefusal?.files).toEqual([join('tenants', 't0004.yaml')])
    } finally {
      await issuer.close()
    }
  })
})
