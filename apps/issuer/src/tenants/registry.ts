import { normaliseHost } from '@tessera/config-schema'
import type { Tenant } from '@tessera/config-schema'
import type { TenantTarget } from '../sources/source.js'
import type { TenantRegistry, TenantRuntime } from './runtime.js'

/** A registry the issuer changes in place, tenant by tenant. */
export interface ServedTenants extends TenantRegistry {
  byName(name: string): TenantRuntime | undefined
  /**
   * Serves `runtimes` (each replacing the tenant of its name, if any) and stops serving the
   * tenants named in `removed`, in one synchronous step: a request sees the tenants before or
   * after, never a mix. Costs time in proportion to the tenants changed, not to those served.
   */
  apply(runtimes: readonly TenantRuntime[], removed: readonly string[]): void
  /** Serves exactly `runtimes`. */
  replaceAll(runtimes: readonly TenantRuntime[]): void
  readonly size: number
}

/**
 * Indexes built tenants by name and host. The configuration sources guarantee that no two
 * tenants share a host (config-schema's rules); were one repeated, the later tenant would answer
 * for it. Looking a host up is one Map lookup, however many tenants are served.
 */
export function createTenantRegistry(runtimes: readonly TenantRuntime[]): ServedTenants {
  const names = new Map<string, TenantRuntime>()
  const hosts = new Map<string, TenantRuntime>()
  // `all()` is asked for by the key poll and the admin API, not per request: made when asked.
  let all: readonly TenantRuntime[] | undefined

  const unserve = (runtime: TenantRuntime): void => {
    for (const host of runtime.tenant.hosts) {
      const key = normaliseHost(host)
      if (hosts.get(key) === runtime) hosts.delete(key)
    }
    if (names.get(runtime.tenant.name) === runtime) names.delete(runtime.tenant.name)
  }
  const serve = (runtime: TenantRuntime): void => {
    names.set(runtime.tenant.name, runtime)
    for (const host of runtime.tenant.hosts) hosts.set(normaliseHost(host), runtime)
  }
  const apply = (next: readonly TenantRuntime[], removed: readonly string[]): void => {
    // Every old version goes first, so that a host moving between two tenants changed together
    // ends up with its new owner whichever comes first.
    for (const name of removed) {
      const old = names.get(name)
      if (old !== undefined) unserve(old)
    }
    for (const runtime of next) {
      const old = names.get(runtime.tenant.name)
      if (old !== undefined) unserve(old)
    }
    for (const runtime of next) serve(runtime)
    all = undefined
  }
  apply(runtimes, [])

  return {
    byHost: (host) => hosts.get(normaliseHost(host)),
    byName: (name) => names.get(name),
    all: () => (all ??= [...names.values()]),
    apply,
    replaceAll(next) {
      names.clear()
      hosts.clear()
      apply(next, [])
    },
    get size() {
      return names.size
    },
  }
}

/** A source's target over a registry, and the change it is applying. */
export interface ServingTarget extends TenantTarget {
  /** Resolves once the change under way, if any, has ended (applied or refused). */
  settled(): Promise<unknown>
}

/**
 * The target a source changes `served` through: each change is built with `build`, then
 * applied in one step, one change at a time, so that a SIGHUP never interleaves with a file or
 * watch event. `update` builds only the tenants it puts, so one that cannot be built (a provider
 * script that throws, a key store error) leaves every other tenant as it was.
 */
export function createServingTarget(
  served: ServedTenants,
  build: (tenants: readonly Tenant[], fresh: boolean) => Promise<TenantRuntime[]>,
): ServingTarget {
  let changing: Promise<unknown> = Promise.resolve()
  const serially = <T>(change: () => Promise<T>): Promise<T> => {
    const next = changing.then(change)
    changing = next.catch(() => undefined)
    return next
  }
  return {
    replaceAll: (tenants) =>
      serially(async () => {
        served.replaceAll(await build(tenants, true))
      }),
    update: (changes) =>
      serially(async () => {
        const built =
          changes.put.length === 0 ? [] : await build(changes.put, changes.freshProviders === true)
        served.apply(built, changes.remove)
      }),
    settled: () => changing,
  }
}
