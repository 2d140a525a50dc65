/**
 * Which tenants a reload of the files source builds and stops serving, from the files it took
 * and the tenants served. Pure: no file is read, nothing is built.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { ConfigFile, Tenant } from '@tessera/config-schema'
import type { Change } from '../reconcile/admission.js'

export interface PlanInput {
  /** The changed files taken, with their new versions. */
  accepted: readonly Change[]
  /** The files removed. */
  removed: readonly string[]
  /** The last good version of a file, whose tenants are served. */
  lastGood: (name: string) => ConfigFile | undefined
  /** The tenants served, by name. */
  served: ReadonlyMap<string, Tenant>
  /** SIGHUP: every tenant is rebuilt with fresh provider scripts. */
  all: boolean
  /** The files under the path that changed and are not YAML (provider scripts, others). */
  other: readonly string[]
}

export interface Plan {
  /** The tenants to build, by name. */
  put: Map<string, Tenant>
  /** The tenants to stop serving. */
  remove: string[]
  /** Whether provider scripts are imported afresh. */
  fresh: boolean
  /** How many tenants would be served once the whole plan is taken. */
  left: number
}

/**
 * The tenants the changed and removed files served before that they do not serve now are
 * removed; the tenants they serve now are built unless served unchanged. A changed provider
 * script rebuilds the tenants that use it, a change to another file that is not YAML (and
 * SIGHUP) every tenant.
 */
export function planReload(input: PlanInput): Plan {
  const { accepted, removed, lastGood, served, all, other } = input
  // The tenants those files served before, and the ones they serve now.
  const before = new Set<string>()
  for (const name of [...accepted.map((c) => c.name), ...removed]) {
    for (const tenant of lastGood(name)?.tenants ?? []) before.add(tenant.name)
  }
  const after = new Map<string, Tenant>()
  for (const { file } of accepted) for (const tenant of file.tenants) after.set(tenant.name, tenant)
  const remove = [...before].filter((name) => !after.has(name))
  const removing = new Set(remove)
  const put = new Map<string, Tenant>()
  for (const [name, tenant] of after) {
    // An unchanged tenant keeps its runtime (and its provider scripts).
    if (all || !isDeepStrictEqual(served.get(name), tenant)) put.set(name, tenant)
  }
  // SIGHUP and changed scripts: every tenant concerned is rebuilt with fresh provider scripts.
  const fresh = all || other.length > 0
  if (all || other.some((file) => !isProviderScript(served, file))) {
    for (const [name, tenant] of served) {
      if (!put.has(name) && !removing.has(name)) put.set(name, tenant)
    }
  } else if (other.length > 0) {
    const scripts = new Set(other)
    for (const [name, tenant] of served) {
      if (!put.has(name) && tenant.providers.some((file) => scripts.has(file))) {
        put.set(name, tenant)
      }
    }
  }
  const added = [...after.keys()].filter((name) => !served.has(name)).length
  return { put, remove, fresh, left: served.size - remove.length + added }
}

/** Is `file` a provider script of some tenant served? */
function isProviderScript(served: ReadonlyMap<string, Tenant>, file: string): boolean {
  for (const tenant of served.values()) if (tenant.providers.includes(file)) return true
  return false
}
