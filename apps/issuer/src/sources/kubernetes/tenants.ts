/**
 * The tenants the `kubernetes` source serves: the latest version of each resource, the version
 * being served, and the last refusal. Each resource is validated and built on its own; a refused
 * one keeps its last good version serving (or stays absent) and touches no other tenant.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { ConfigDocument, Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { describeProblems } from '../source.js'
import type { TenantTarget } from '../source.js'
import type { Resource } from './resources.js'
import { validateTenantResource } from './validate.js'
import type { ValidationContext } from './validate.js'

/** The latest version of a resource, as listed or watched. */
interface Seen {
  object: Resource
  resourceVersion: string | undefined
}

/** A tenant being served, and the resource version it came from. */
interface Served {
  resourceVersion: string | undefined
  /** Its document as validated, for the rules across tenants. */
  document: ConfigDocument
  tenant: Tenant
}

/** The last refusal of a resource, so that a retry finding the same problems stays quiet. */
interface Refusal {
  resourceVersion: string | undefined
  summary: string
  /** Refused by the build (provider import, key store), not by validation. */
  build: boolean
}

export interface TenantSetOptions extends ValidationContext {
  namespace: string
  logger: Logger
}

/**
 * Every change goes through one queue, one at a time and in the order received: a relist is
 * applied only after the events that came before it. No method rejects; an unexpected failure
 * is logged.
 */
export interface TenantSet {
  /** Where built tenants go; nothing is served before it is attached. */
  attach(target: TenantTarget): void
  /** A full list: serves what it holds, removes what it no longer does. */
  applyList(items: readonly Resource[]): Promise<void>
  /** One watch event: ADDED, MODIFIED or DELETED. */
  applyEvent(type: string, object: Resource): Promise<void>
  /**
   * Rebuilds every tenant (fresh provider scripts), each keeping its last good version on
   * failure; answers whether all are served.
   */
  rebuildAll(): Promise<boolean>
  /** Resolves once every change queued so far is applied. */
  settled(): Promise<void>
  /** The names of the tenants served. */
  served(): string[]
}

export function createTenantSet(options: TenantSetOptions): TenantSet {
  const { logger, namespace } = options
  const where = (name: string) => `kubernetes:${namespace}/${name}`
  let target: TenantTarget | undefined

  const desired = new Map<string, Seen>()
  const served = new Map<string, Served>()
  const refused = new Map<string, Refusal>()

  let chain: Promise<unknown> = Promise.resolve()
  const enqueue = <T>(operation: () => Promise<T>, fallback: T): Promise<T> => {
    const next = chain.then(operation).catch((error: unknown) => {
      logger.error({ err: error }, 'applying a Tenant change failed unexpectedly')
      return fallback
    })
    chain = next
    return next
  }

  const refuse = (name: string, seen: Seen, problems: string[], build: boolean): void => {
    const summary = problems.join('\n')
    const before = refused.get(name)
    refused.set(name, { resourceVersion: seen.resourceVersion, summary, build })
    if (
      before !== undefined &&
      before.resourceVersion === seen.resourceVersion &&
      before.summary === summary
    )
      return
    const current = served.get(name)
    logger.error(
      {
        tenant: name,
        namespace,
        resourceVersion: seen.resourceVersion,
        problems,
        ...(current === undefined ? {} : { serving: current.resourceVersion }),
      },
      current === undefined
        ? 'Tenant resource refused; the tenant is not served'
        : 'Tenant resource refused; still serving its last good version',
    )
  }

  /** Tries to serve the latest version of one resource; answers whether it is served. */
  const attempt = async (name: string, seen: Seen, rebuild: boolean): Promise<boolean> => {
    if (target === undefined) return false
    const current = served.get(name)
    const others = [...served.entries()]
      .filter(([other]) => other !== name)
      .map(([, entry]) => entry.document)
    const checked = validateTenantResource(where(name), seen.object, others, options)
    if (!checked.ok) {
      refuse(name, seen, checked.issues, false)
      return false
    }
    // Labels, annotations or status changed, not the tenant: nothing to rebuild.
    if (!rebuild && current !== undefined && isDeepStrictEqual(current.tenant, checked.tenant)) {
      served.set(name, { ...current, resourceVersion: seen.resourceVersion })
      refused.delete(name)
      return true
    }
    try {
      await target.put(checked.tenant)
    } catch (error) {
      refuse(name, seen, describeProblems(error), true)
      return false
    }
    served.set(name, {
      resourceVersion: seen.resourceVersion,
      document: checked.document,
      tenant: checked.tenant,
    })
    refused.delete(name)
    if (!rebuild || current === undefined) {
      logger.info(
        {
          tenant: name,
          namespace,
          resourceVersion: seen.resourceVersion,
          hosts: checked.tenant.hosts,
        },
        current === undefined ? 'Tenant added' : 'Tenant changed',
      )
    }
    return true
  }

  /**
   * Brings the served tenants to the latest resources. Oldest resources first, so that of two
   * new resources claiming one host, the older wins; the ones served already keep theirs.
   * Answers whether every resource is served as it is now.
   */
  const reconcile = async (rebuild: boolean): Promise<boolean> => {
    let converged = true
    const order = [...desired.entries()].sort(
      ([a, x], [b, y]) =>
        (x.object.metadata.creationTimestamp ?? '').localeCompare(
          y.object.metadata.creationTimestamp ?? '',
        ) || a.localeCompare(b),
    )
    for (const [name, seen] of order) {
      if (!rebuild && served.get(name)?.resourceVersion === seen.resourceVersion) continue
      const refusal = refused.get(name)
      // A build failure is retried on the resource's next change, a relist or SIGHUP, not on
      // every event of other tenants.
      if (!rebuild && refusal?.build === true && refusal.resourceVersion === seen.resourceVersion) {
        converged = false
        continue
      }
      if (!(await attempt(name, seen, rebuild))) converged = false
    }
    return converged
  }

  const remove = async (name: string): Promise<void> => {
    desired.delete(name)
    refused.delete(name)
    if (!served.has(name) || target === undefined) return
    await target.remove(name)
    served.delete(name)
    logger.info({ tenant: name, namespace }, 'Tenant removed')
  }

  const applyList = async (items: readonly Resource[]): Promise<void> => {
    const names = new Set(items.map((item) => item.metadata.name))
    for (const name of [...served.keys()]) if (!names.has(name)) await remove(name)
    desired.clear()
    for (const [name, refusal] of refused) {
      // A relist retries what failed to build; refusals that come back the same stay quiet.
      if (names.has(name)) refusal.build = false
      else refused.delete(name)
    }
    for (const item of items) {
      desired.set(item.metadata.name, {
        object: item,
        resourceVersion: item.metadata.resourceVersion,
      })
    }
    await reconcile(false)
  }

  const applyEvent = async (type: string, object: Resource): Promise<void> => {
    const { name } = object.metadata
    if (type === 'DELETED') {
      await remove(name)
    } else {
      desired.set(name, { object, resourceVersion: object.metadata.resourceVersion })
    }
    // Also after a deletion: a resource refused for a host the deleted one held may now fit.
    await reconcile(false)
  }

  return {
    attach(to) {
      target = to
    },
    applyList: (items) => enqueue(() => applyList(items), undefined),
    applyEvent: (type, object) => enqueue(() => applyEvent(type, object), undefined),
    rebuildAll: () =>
      enqueue(async () => {
        const converged = await reconcile(true)
        logger.info(
          { namespace, tenants: [...served.keys()], refused: [...refused.keys()] },
          'Tenants reloaded',
        )
        return converged
      }, false),
    settled: () => chain.then(() => undefined),
    served: () => [...served.keys()],
  }
}
