import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigError } from '@tessera/config-schema'
import { eventually } from '../support/eventually.js'
import { postForm, send } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { startFakeApiServer } from './fake-api-server.js'
import { startOnFakeApi } from './many-tenants.js'
import type { FakeApiServer } from './fake-api-server.js'
import {
  ACME,
  expectNotServed,
  expectServed,
  GLOBEX,
  INITECH,
  NAMESPACE,
  passwordToken,
  providerDirectory,
  tenant,
} from './fixtures.js'

describe('kubernetes source (TESSERA_CONFIG_SOURCE=kubernetes)', () => {
  let tmp: ReturnType<typeof tempDir>
  let api: FakeApiServer
  let providers: string
  let kubeconfig: string
  let issuer: InProcessIssuer | undefined

  beforeEach(async () => {
    tmp = tempDir()
    providers = providerDirectory(tmp.dir)
    api = await startFakeApiServer({ namespace: NAMESPACE })
    kubeconfig = api.writeKubeConfig(tmp.dir)
  })
  afterEach(async () => {
    await issuer?.close()
    issuer = undefined
    await api.close()
    tmp.remove()
  })

  /** An in-process issuer on the fake API server, retrying within tens of milliseconds. */
  async function start(): Promise<InProcessIssuer> {
    issuer = await startOnFakeApi(api, providers, kubeconfig)
    return issuer
  }

  const readyz = async (running: InProcessIssuer) =>
    send(running.url, { path: '/readyz', host: 'anything.test' })
  const ready = (running: InProcessIssuer) =>
    eventually(async () => expect((await readyz(running)).status).toBe(200))
  const logs = (running: InProcessIssuer, from = 0) => running.logs.slice(from).join('\n')

  it('serves added Tenants, applies changes and removes deleted ones without a restart', async () => {
    api.apply(tenant('acme', [ACME.host], ACME))
    const running = await start()
    await ready(running)
    await expectServed(running.url, ACME.host, 'http://acme.test')
    expect((await passwordToken(running.url, ACME.host, ACME)).status).toBe(200)
    await expectNotServed(running.url, GLOBEX.host)

    api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
    await eventually(() => expectServed(running.url, GLOBEX.host, 'http://globex.test'))
    expect((await passwordToken(running.url, GLOBEX.host, GLOBEX)).status).toBe(200)

    // acme gets a second host and a second client.
    api.apply(
      tenant('acme', [ACME.host, 'login.acme.test'], ACME, {
        clients: [
          { client_id: ACME.client, client_secret: ACME.secret, grant_types: ['password'] },
          {
            client_id: INITECH.client,
            client_secret: 'second-client-secret',
            grant_types: ['password'],
          },
        ],
      }),
    )
    await eventually(() => expectServed(running.url, 'login.acme.test', 'http://acme.test'))
    const second = await passwordToken(running.url, 'login.acme.test', {
      client: INITECH.client,
      secret: 'second-client-secret',
    })
    expect(second.status).toBe(200)

    api.remove('globex')
    await eventually(() => expectNotServed(running.url, GLOBEX.host))
    await expectServed(running.url, ACME.host, 'http://acme.test')
    expect(running.issuer.tenants.map((t) => t.name)).toEqual(['acme'])

    const log = logs(running)
    expect(log).toContain('"msg":"Tenant added"')
    expect(log).toContain('"msg":"Tenant changed"')
    expect(log).toContain('"msg":"Tenant removed"')
    // Everything came through the one watch: no relist was needed.
    expect(api.lists).toBe(1)
  })

  it('refuses an invalid Tenant with every problem, keeping its last good version and the other tenants', async () => {
    api.apply(tenant('acme', [ACME.host], ACME))
    api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
    const running = await start()
    await ready(running)

    // Three problems in one change of acme, and a secret that must not reach the log.
    const leaked = 'do-not-log-this-client-secret'
    let mark = running.logs.length
    api.apply(
      tenant('acme', [ACME.host, 'new.acme.test'], ACME, {
        jwt_algorithm: 'ES256',
        clients: [{ client_id: 'not-a-uuid', client_secret: leaked, grant_types: ['password'] }],
      }),
    )
    await eventually(() => expect(logs(running, mark)).toContain('Tenant resource refused'))
    let refusal = logs(running, mark)
    expect(refusal).toContain('still serving its last good version')
    expect(refusal).toContain('kubernetes:tenants/acme: spec.jwt_algorithm: must be one of')
    expect(refusal).toContain('kubernetes:tenants/acme: spec.clients.0.client_id: must be a UUID')
    expect(refusal).not.toContain(leaked)
    expect(JSON.stringify(running.logs)).not.toContain(leaked)
    // The last good acme serves on; the refused version's host is not served; globex is as it was.
    expect((await passwordToken(running.url, ACME.host, ACME)).status).toBe(200)
    await expectNotServed(running.url, 'new.acme.test')
    expect((await passwordToken(running.url, GLOBEX.host, GLOBEX)).status).toBe(200)

    // A newcomer claiming globex's host is refused; it never was valid, so it is not served.
    mark = running.logs.length
    api.apply(tenant('initech', [INITECH.host, GLOBEX.host], INITECH))
    await eventually(() => expect(logs(running, mark)).toContain('Tenant resource refused'))
    refusal = logs(running, mark)
    expect(refusal).toContain('the tenant is not served')
    expect(refusal).toContain(
      'kubernetes:tenants/initech: spec.hosts.1: host \\"globex.test\\" is also used by tenant \\"globex\\" (kubernetes:tenants/globex)',
    )
    await expectNotServed(running.url, INITECH.host)
    expect((await passwordToken(running.url, GLOBEX.host, GLOBEX)).status).toBe(200)

    // Once globex is gone, the host is free and initech converges without a change of its own.
    api.remove('globex')
    await eventually(async () =>
      expect((await passwordToken(running.url, GLOBEX.host, INITECH)).status).toBe(200),
    )
    expect((await passwordToken(running.url, GLOBEX.host, GLOBEX)).status).toBe(401)
    await expectServed(running.url, INITECH.host, 'http://initech.test')

    // A fixed acme is taken.
    api.apply(tenant('acme', [ACME.host, 'new.acme.test'], ACME))
    await eventually(() => expectServed(running.url, 'new.acme.test', 'http://acme.test'))
  })

  it('keeps every other tenant when one cannot be built or names a script outside the directory', async () => {
    api.apply(tenant('acme', [ACME.host], ACME))
    const running = await start()
    await ready(running)

    let mark = running.logs.length
    api.apply(tenant('globex', [GLOBEX.host], GLOBEX, { providers: ['broken.mjs'] }))
    await eventually(() => expect(logs(running, mark)).toContain('Tenant resource refused'))
    expect(logs(running, mark)).toContain('provider script failed to load: this provider is broken')
    await expectNotServed(running.url, GLOBEX.host)
    expect((await passwordToken(running.url, ACME.host, ACME)).status).toBe(200)

    mark = running.logs.length
    api.apply(
      tenant('initech', [INITECH.host], INITECH, {
        providers: ['../users.mjs', join(providers, 'users.mjs')],
      }),
    )
    await eventually(() => expect(logs(running, mark)).toContain('Tenant resource refused'))
    const refusal = logs(running, mark)
    for (const index of [0, 1]) {
      expect(refusal).toContain(
        `kubernetes:tenants/initech: spec.providers.${index}: must be a relative path inside the provider directory (TESSERA_CONFIG)`,
      )
    }
    expect(refusal).not.toContain('provider script not found')
    await expectNotServed(running.url, INITECH.host)

    // The broken tenant, fixed, is served.
    api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
    await eventually(() => expectServed(running.url, GLOBEX.host, 'http://globex.test'))
    expect((await passwordToken(running.url, ACME.host, ACME)).status).toBe(200)
  })

  it('reconnects after the watch connection drops and sees the changes made meanwhile', async () => {
    api.apply(tenant('acme', [ACME.host], ACME))
    const running = await start()
    await ready(running)
    await eventually(() => expect(api.openWatches()).toBe(1))
    const lists = api.lists
    const watches = api.watches

    // The connection drops and the API server refuses watches for a while.
    api.failWatches = true
    api.dropWatches()
    await eventually(() => expect(api.watches).toBeGreaterThanOrEqual(watches + 2))
    api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
    await expectNotServed(running.url, GLOBEX.host)
    api.failWatches = false

    await eventually(() => expectServed(running.url, GLOBEX.host, 'http://globex.test'))
    await eventually(() => expect(api.openWatches()).toBe(1))
    // And later events arrive on the new connection.
    api.remove('acme')
    await eventually(() => expectNotServed(running.url, ACME.host))
    // Resumed from the last resourceVersion: no relist.
    expect(api.lists).toBe(lists)
    expect(logs(running)).toContain('Tenant watch failed; reconnecting')
    expect((await readyz(running)).status).toBe(200)
  })

  it.each(['event', 'http'] as const)(
    'lists again after 410 Gone (%s) and converges, deletions included',
    async (how) => {
      api.apply(tenant('acme', [ACME.host], ACME))
      api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
      const running = await start()
      await ready(running)
      await eventually(() => expect(api.openWatches()).toBe(1))
      const lists = api.lists

      // Changes the issuer cannot see as events: the watch is down, then history is compacted.
      api.failWatches = true
      api.dropWatches()
      api.remove('globex')
      api.apply(tenant('initech', [INITECH.host], INITECH))
      api.apply(tenant('acme', [ACME.host, 'new.acme.test'], ACME))
      api.expire(how)
      api.failWatches = false

      await eventually(async () => {
        await expectNotServed(running.url, GLOBEX.host)
        await expectServed(running.url, INITECH.host, 'http://initech.test')
        await expectServed(running.url, 'new.acme.test', 'http://acme.test')
      })
      expect(api.lists).toBeGreaterThan(lists)
      expect(logs(running)).toContain('Tenant watch expired (410 Gone); listing again')
      expect(running.issuer.tenants.map((t) => t.name).sort()).toEqual(['acme', 'initech'])

      // An open watch told its version expired also lists again.
      await eventually(() => expect(api.openWatches()).toBe(1))
      const before = api.lists
      api.expire('event')
      await eventually(() => expect(api.lists).toBe(before + 1))
      await eventually(() => expect(api.openWatches()).toBe(1))
      expect((await passwordToken(running.url, INITECH.host, INITECH)).status).toBe(200)
    },
  )

  it('answers /readyz 503 until the first list succeeds, then serves', async () => {
    api.apply(tenant('acme', [ACME.host], ACME))
    api.failLists = true
    const running = await start()

    const notReady = await readyz(running)
    expect(notReady.status).toBe(503)
    expect(notReady.json).toEqual({ status: 'not ready', reason: 'configuration not loaded' })
    expect((await send(running.url, { path: '/healthz', host: 'any.test' })).status).toBe(200)
    await expectNotServed(running.url, ACME.host)
    await eventually(() => expect(api.lists).toBeGreaterThanOrEqual(2))
    expect(logs(running)).toContain('listing Tenant resources failed; not ready, retrying')
    expect(logs(running)).toContain('HTTP 503: etcd is not ready')
    expect((await readyz(running)).status).toBe(503)

    api.failLists = false
    await ready(running)
    await expectServed(running.url, ACME.host, 'http://acme.test')
  })

  it('is ready with zero Tenants and answers unknown hosts 404', async () => {
    const running = await start()
    await ready(running)
    expect(running.issuer.tenants).toEqual([])
    await expectNotServed(running.url, ACME.host)
    api.apply(tenant('acme', [ACME.host], ACME))
    await eventually(() => expectServed(running.url, ACME.host, 'http://acme.test'))
  })

  it('re-imports provider scripts on reload (SIGHUP), a tenant whose script fails keeping its last good version', async () => {
    const users = readFileSync(join(providers, 'users.mjs'), 'utf8')
    writeFileSync(join(providers, 'acme.mjs'), users)
    writeFileSync(join(providers, 'globex.mjs'), users)
    api.apply(tenant('acme', [ACME.host], ACME, { providers: ['acme.mjs'] }))
    api.apply(tenant('globex', [GLOBEX.host], GLOBEX, { providers: ['globex.mjs'] }))
    const running = await start()
    await ready(running)
    const carol = { username: 'carol', password: 'carol-password' }
    const asCarol = (host: string, client: { client: string; secret: string }) =>
      postForm(running.url, host, {
        grant_type: 'password',
        ...carol,
        client_id: client.client,
        client_secret: client.secret,
      })
    expect((await asCarol(ACME.host, ACME)).status).toBe(400)

    // acme's script now knows carol; globex's script breaks.
    writeFileSync(
      join(providers, 'acme.mjs'),
      `export default { async authenticate({ username, password }) {
        return username === 'carol' && password === 'carol-password' ? { sub: 'carol' } : null
      } }\n`,
    )
    writeFileSync(join(providers, 'globex.mjs'), "throw new Error('globex script broke')\n")
    const mark = running.logs.length
    expect(await running.issuer.reload()).toBe(false)
    expect((await asCarol(ACME.host, ACME)).status).toBe(200)
    const refusal = logs(running, mark)
    expect(refusal).toContain('still serving its last good version')
    expect(refusal).toContain('provider script failed to load: globex script broke')
    expect(refusal).toContain('"msg":"Tenants reloaded"')
    // globex keeps the scripts it was built with.
    expect((await passwordToken(running.url, GLOBEX.host, GLOBEX)).status).toBe(200)

    writeFileSync(join(providers, 'globex.mjs'), users)
    expect(await running.issuer.reload()).toBe(true)
    expect((await passwordToken(running.url, GLOBEX.host, GLOBEX)).status).toBe(200)
  })

  it('refuses to start, naming every problem, without a readable kubeconfig or the provider directory', async () => {
    await expect(
      startIssuer({
        databaseUrl: 'memory:',
        config: providers,
        vars: { TESSERA_CONFIG_SOURCE: 'kubernetes', KUBECONFIG: `${tmp.dir}/missing.yaml` },
      }),
    ).rejects.toThrow(`environment: KUBECONFIG: no such file: ${tmp.dir}/missing.yaml`)

    const error: unknown = await startIssuer({
      databaseUrl: 'memory:',
      config: `${tmp.dir}/no-such-directory`,
      vars: { TESSERA_CONFIG_SOURCE: 'kubernetes', KUBECONFIG: `${tmp.dir}/missing.yaml` },
    }).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).issues.map((issue) => issue.path)).toEqual([
      'KUBECONFIG',
      'TESSERA_CONFIG',
    ])
    expect((error as ConfigError).message).toContain(
      'environment: TESSERA_CONFIG: with TESSERA_CONFIG_SOURCE=kubernetes, must be the directory of the provider scripts',
    )
  })
})
