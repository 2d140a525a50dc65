import { createKubernetesSource } from '../../src/sources/kubernetes.js'
import { startIssuer } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import type { FakeApiServer, TenantInput } from './fake-api-server.js'
import { NAMESPACE, tenant } from './fixtures.js'

/** The host of tenant number `index` of {@link manyTenants}. */
export const manyHost = (index: number): string => `t${index}.many.test`

/** The one client of tenant number `index`: a UUID that the index makes unique. */
export function manyClient(index: number): { client: string; secret: string } {
  const hex = index.toString(16).padStart(12, '0')
  return { client: `dddddddd-0000-4000-8000-${hex}`, secret: `many-client-secret-${index}` }
}

/** `count` valid Tenants, `t0` to `tN-1`, each with its own host and client. */
export function manyTenants(count: number): TenantInput[] {
  return Array.from({ length: count }, (_, index) =>
    tenant(`t${index}`, [manyHost(index)], manyClient(index)),
  )
}

/**
 * An in-process issuer on `api`, started the way source.e2e.test.ts starts it (retries within
 * tens of milliseconds, no provider watch), with its logs captured.
 */
export function startOnFakeApi(
  api: FakeApiServer,
  providers: string,
  kubeconfig: string,
): Promise<InProcessIssuer> {
  return startIssuer({
    databaseUrl: 'memory:',
    config: providers,
    vars: {
      TESSERA_CONFIG_SOURCE: 'kubernetes',
      TESSERA_KUBERNETES_NAMESPACE: NAMESPACE,
      KUBECONFIG: kubeconfig,
    },
    source: ({ settings, logger, env }) =>
      createKubernetesSource({
        namespace: settings.kubernetesNamespace,
        providerDirectory: settings.config,
        env,
        jwtSecret: settings.jwtSecret,
        logger,
        watchProviders: false,
        retry: { initialMs: 20, maxMs: 200 },
      }),
  })
}
