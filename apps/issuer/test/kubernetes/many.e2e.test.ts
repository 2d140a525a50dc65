import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { send } from '../support/http.js'
import { tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { startFakeApiServer } from './fake-api-server.js'
import type { FakeApiServer } from './fake-api-server.js'
import {
  expectNotServed,
  expectServed,
  NAMESPACE,
  passwordToken,
  providerDirectory,
  tenant,
} from './fixtures.js'
import { manyClient, manyHost, manyTenants, startOnFakeApi } from './many-tenants.js'

const COUNT = 2000

describe('kubernetes source with thousands of Tenant resources', () => {
  let tmp: ReturnType<typeof tempDir>
  let api: FakeApiServer
  let issuer: InProcessIssuer | undefined

  beforeEach(async () => {
    tmp = tempDir()
    api = await startFakeApiServer({ namespace: NAMESPACE })
  })
  afterEach(async () => {
    await issuer?.close()
    issuer = undefined
    await api.close()
    tmp.remove()
  })

  it('serves every one of the first list, refusing the later of two that claim one host', async () => {
    for (const input of manyTenants(COUNT)) api.apply(input)
    // Created after t7, and claiming its host: refused, t7 keeps it.
    const late = { client: 'ffffffff-0000-4000-8000-000000000001', secret: 'late-client-secret' }
    api.apply(tenant('late', ['late.many.test', manyHost(7)], late))
    const running = await startOnFakeApi(
      api,
      providerDirectory(tmp.dir),
      api.writeKubeConfig(tmp.dir),
    )
    issuer = running
    await eventually(
      async () =>
        expect((await send(running.url, { path: '/readyz', host: 'probe' })).status).toBe(200),
      { timeoutMs: 60_000 },
    )

    expect(running.issuer.tenants).toHaveLength(COUNT)
    for (const index of [0, 7, 1234, COUNT - 1]) {
      await expectServed(running.url, manyHost(index), `http://${manyHost(index)}`)
    }
    expect((await passwordToken(running.url, manyHost(7), manyClient(7))).status).toBe(200)
    await expectNotServed(running.url, 'late.many.test')
    const refusals = running.logs
      .filter((line) => line.includes('Tenant resource refused'))
      .map((line) => JSON.parse(line) as { tenant: string; problems: string[] })
    expect(refusals).toEqual([
      expect.objectContaining({
        tenant: 'late',
        problems: [
          `kubernetes:${NAMESPACE}/late: spec.hosts.1: host "${manyHost(7)}" is also used by tenant "t7" (kubernetes:${NAMESPACE}/t7)`,
        ],
      }),
    ])

    // t7 deleted: its host is free, and the refused resource is served without a change.
    api.remove('t7')
    await eventually(() => expectServed(running.url, 'late.many.test', 'http://late.many.test'))
    expect((await passwordToken(running.url, manyHost(7), late)).status).toBe(200)
    expect(running.issuer.tenants).toHaveLength(COUNT)
  })
})
