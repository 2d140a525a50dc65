import type { Settings } from '@tessera/config-schema'
import type { Issuer } from '../issuer.js'
import type { TenantRuntime } from '../tenants/runtime.js'

/** The most tenants the `tessera issuer listening` line describes one by one. */
const LISTED_TENANTS = 100

function describeServed(runtime: TenantRuntime): Record<string, unknown> {
  return {
    name: runtime.tenant.name,
    issuer: runtime.issuer,
    alg: runtime.tenant.jwtAlgorithm,
    kid: runtime.keyRing.activeKid(),
  }
}

/** What the `tessera issuer listening` line says of the tenants, the database and the source. */
export function servedSummary(settings: Settings, issuer: Issuer): Record<string, unknown> {
  const served = issuer.registry.all()
  return {
    // One line of ten thousand tenants helps nobody and costs megabytes: past a hundred, the
    // line gives the count (the admin API's GET /admin/tenants lists them all).
    ...(served.length > LISTED_TENANTS
      ? {
          tenantCount: served.length,
          tenants: served.slice(0, LISTED_TENANTS).map(describeServed),
        }
      : { tenants: served.map(describeServed) }),
    database: settings.databaseUrl.split(':', 1)[0],
    source:
      settings.configSource === 'kubernetes'
        ? `kubernetes:${settings.kubernetesNamespace}`
        : settings.config,
    ready: issuer.ready(),
  }
}

/** A listen address as the host part of a URL: IPv6 literals go in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}
