import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import { startFakeApiServer } from './fake-api-server.js'
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

const KEY_ENCRYPTION_SECRET = 'kubernetes-e2e-key-encryption-secret-0123456789'

describe('tessera start with TESSERA_CONFIG_SOURCE=kubernetes', () => {
  let tmp: ReturnType<typeof tempDir>
  let api: FakeApiServer
  let vars: Record<string, string>
  beforeAll(async () => {
    tmp = tempDir()
    api = await startFakeApiServer({ namespace: NAMESPACE })
    vars = {
      TESSERA_CONFIG_SOURCE: 'kubernetes',
      TESSERA_CONFIG: providerDirectory(tmp.dir),
      TESSERA_KUBERNETES_NAMESPACE: NAMESPACE,
      KUBECONFIG: api.writeKubeConfig(tmp.dir),
      JWT_SECRET,
      DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
    }
  })
  afterAll(async () => {
    await api.close()
    tmp.remove()
  })

  it('serves the Tenant resources, follows them through a dropped watch and a 410, and stops cleanly', async () => {
    api.apply(tenant('acme', [ACME.host], ACME))
    const cli = await startIssuer({ command: 'start', env: vars })
    try {
      await eventually(async () =>
        expect((await send(cli.url, { path: '/readyz', host: 'probe' })).status).toBe(200),
      )
      // `start` issues https issuer URLs.
      await expectServed(cli.url, ACME.host, 'https://acme.test')
      expect((await passwordToken(cli.url, ACME.host, ACME)).status).toBe(200)

      api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
      await eventually(() => expectServed(cli.url, GLOBEX.host, 'https://globex.test'))

      // The connection drops: the issuer reconnects (default backoff) and sees what came after.
      await eventually(() => expect(api.openWatches()).toBe(1))
      api.dropWatches()
      api.remove('acme')
      await eventually(() => expectNotServed(cli.url, ACME.host))

      // The open watch is told its version expired: the issuer lists again and keeps serving.
      await eventually(() => expect(api.openWatches()).toBe(1))
      const lists = api.lists
      api.expire('event')
      await eventually(() => expect(api.lists).toBe(lists + 1))
      expect((await passwordToken(cli.url, GLOBEX.host, GLOBEX)).status).toBe(200)

      const log = cli.logs.join('\n')
      expect(log).toContain('"msg":"Tenant resources loaded"')
      expect(log).toContain('"msg":"Tenant watch failed; reconnecting"')
      expect(log).toContain('"msg":"Tenant watch expired (410 Gone); listing again"')
      expect(log).not.toContain(api.token)
    } finally {
      await cli.close()
    }
    expect(cli.child.exitCode).toBe(0)
  })

  it('runs check-config and keys against the Tenant resources', async () => {
    api.apply(tenant('initech', [INITECH.host], INITECH, { jwt_algorithm: 'RS256' }))
    // Invalid: its client_id is not a UUID. Refused, and named, without hiding the others.
    api.apply(tenant('broken', ['broken.test'], { client: 'not-a-uuid', secret: 'x'.repeat(16) }))

    // initech signs with RS256, which start serves only with a KEY_ENCRYPTION_SECRET.
    const sealed = { ...vars, KEY_ENCRYPTION_SECRET }
    const checked = await runCli(['check-config'], sealed)
    expect(checked.status).toBe(1)
    expect(checked.stderr).toContain(`kubernetes:${NAMESPACE}/broken`)
    expect(checked.stderr).toContain('client_id')
    expect(checked.stderr).toContain('configuration refused: ')

    const rotated = await runCli(['keys', 'rotate', '--tenant', 'initech'], vars)
    expect(rotated.stdout + rotated.stderr).not.toContain(api.token)
    expect(rotated.status, rotated.stderr).toBe(0)
    const listed = await runCli(['keys', 'list', '--json', '--tenant', 'initech'], vars)
    expect(listed.status, listed.stderr).toBe(0)
    const keys = JSON.parse(listed.stdout) as { tenant: string; state: string }[]
    expect(keys.map((key) => [key.tenant, key.state])).toEqual([['initech', 'active']])
    const missing = await runCli(['keys', 'list', '--tenant', 'broken'], vars)
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain('broken')

    api.remove('broken')
    const clean = await runCli(['check-config'], sealed)
    expect(clean.stderr).toBe('')
    expect(clean.status).toBe(0)
    expect(clean.stdout).toContain(`from Tenant resources in namespace ${NAMESPACE}`)
    expect(clean.stdout).toContain('initech: RS256')
  })

  it('refuses an RS256 Tenant without KEY_ENCRYPTION_SECRET like an invalid one, serving the others', async () => {
    api.apply(tenant('globex', [GLOBEX.host], GLOBEX))
    api.apply(tenant('initech', [INITECH.host], INITECH, { jwt_algorithm: 'RS256' }))
    const cli = await startIssuer({ command: 'start', env: vars })
    try {
      await eventually(async () =>
        expect((await send(cli.url, { path: '/readyz', host: 'probe' })).status).toBe(200),
      )
      expect((await passwordToken(cli.url, GLOBEX.host, GLOBEX)).status).toBe(200)
      await expectNotServed(cli.url, INITECH.host)
      const refusals = cli.logs
        .filter((line) => line.includes('Tenant resource refused'))
        .map((line) => JSON.parse(line) as { tenant: string; problems: string[] })
      expect(refusals).toEqual([
        expect.objectContaining({
          tenant: 'initech',
          problems: [
            'environment: KEY_ENCRYPTION_SECRET: not set: tessera start refuses to serve RS256 ' +
              'tenant "initech" (its private keys would be stored in clear); make a secret with: ' +
              'openssl rand -base64 32',
          ],
        }),
      ])
      // Switched to HS256, the same resource is taken.
      api.apply(tenant('initech', [INITECH.host], INITECH, { jwt_algorithm: 'HS256' }))
      await eventually(async () =>
        expect((await passwordToken(cli.url, INITECH.host, INITECH)).status).toBe(200),
      )
    } finally {
      await cli.close()
      api.remove('initech')
    }
  })

  it('exits 1 before listening when the kubeconfig cannot be read', async () => {
    const result = await runCli(['start', '--port', '0'], {
      ...vars,
      KUBECONFIG: `${tmp.dir}/missing-kubeconfig.yaml`,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      `environment: KUBECONFIG: no such file: ${tmp.dir}/missing-kubeconfig.yaml`,
    )
    expect(result.stdout).not.toContain('listening')
  })
})
