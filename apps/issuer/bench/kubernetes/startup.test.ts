// Start-up of the kubernetes source with many Tenant resources: for each count
// (BENCH_K8S_COUNTS, default "1000,3000"), the fake API server of test/kubernetes holds that many
// valid Tenants (one host and one client each, one shared provider script, HS256); an in-process
// issuer is started on it and timed until every tenant is served (what /readyz waits for). The
// issuer listens before the list (kubernetes mode), so the time is the list, the validation and
// the builds. CPU time and RSS are the whole process's: vitest's and the fake API server's too.
// Run by hand, after `pnpm --filter @tessera/issuer build` (the packages are read from dist/):
//   cd apps/issuer && npx vitest run --config bench/kubernetes/vitest.config.ts
import { expect, it } from 'vitest'
import { startFakeApiServer } from '../../test/kubernetes/fake-api-server.js'
import { NAMESPACE, providerDirectory } from '../../test/kubernetes/fixtures.js'
import { manyTenants, startOnFakeApi } from '../../test/kubernetes/many-tenants.js'
import { tempDir } from '../../test/support/issuer.js'

const COUNTS = (process.env.BENCH_K8S_COUNTS ?? '1000,3000').split(',').map(Number)

it('serves every Tenant resource of the first list', async () => {
  const rows: string[] = []
  for (const count of COUNTS) {
    const tmp = tempDir()
    const api = await startFakeApiServer({ namespace: NAMESPACE })
    try {
      for (const input of manyTenants(count)) api.apply(input)
      const providers = providerDirectory(tmp.dir)
      const kubeconfig = api.writeKubeConfig(tmp.dir)
      const cpu = process.cpuUsage()
      const began = performance.now()
      const running = await startOnFakeApi(api, providers, kubeconfig)
      try {
        while (running.issuer.tenants.length < count) {
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        const served = performance.now() - began
        const used = process.cpuUsage(cpu)
        const cpuMs = (used.user + used.system) / 1000
        const rss = process.memoryUsage().rss / 2 ** 20
        expect(running.issuer.tenants).toHaveLength(count)
        rows.push(`| ${count} | ${Math.round(served)} | ${Math.round(cpuMs)} | ${rss.toFixed(0)} |`)
        process.stderr.write(`${rows[rows.length - 1]}\n`)
      } finally {
        await running.close()
      }
    } finally {
      await api.close()
      tmp.remove()
    }
  }
  console.log(
    [
      '| Tenants | all served ms | CPU ms | RSS MB |',
      '| ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n'),
  )
})
