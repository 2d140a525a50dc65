/**
 * The tenants the `kubernetes` source serves: the latest version of each resource, the version
 * being served, and the last refusal. Each resource is validated on its own, against an index of
 * what the served tenants claim; a refused one keeps its last good version serving (or stays
 * absent) and touches no other tenant. Tenants are built in batches (a first list of thousands),
 * a batch that fails being split until the tenant that cannot be built is found.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { describeProblems } from '../source.js'
import type { TenantTarget } from '../source.js'
import type { Resource } from './resources.js'
import { createServedClaims, validateTenantResource } from './validate.js'
import type { ValidationContext } from './validate.js'

/**
 * Most tenants built in one `TenantTarget.update`: a batch is all or nothing, and one that fails
 * is split in halves, so that a tenant that cannot be built costs a few smaller builds.
 */
export const BATCH_SIZE = 500

/** The latest version of a resource, as listed or watched. */
interface Seen {
  object: Resource
  resourceVersion: string | undefined
}

/** A tenant being served, and the resource version it came from. */
interface Served {
  resourceVersion: string | undefined
  tenant: Tenant
}

/** The last refusal of a resource, so that a retry finding the same problems stays quiet. */
interface Refusal {
  resourceVersion: string | undefined
  summary: string
  /** Refused by the build (provider import, key store), not by validation. */
  build: boolean
  /**
   * `ServedClaims.releases()` when it was validated: a resource refused by validation is
   * checked again without a change of its own only once some claim has been given up since.
   */
  releases: number
  /** A relist asks for the resource to be tried again, whatever the refusal. */
  retry: boolean
}

/**
 * Whether the provider scripts of a reconcile's builds are imported afresh: once per reconcile,
 * by its first build, and only when asked. Node never unloads an ES module, so every fresh import
 * of a script is a module the process keeps.
 */
type FreshProviders = () => boolean

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
  // What the served tenants claim (names, hosts, client_ids): a resource is checked against it
  // in time proportional to the resource, not to the tenants served.
  const claims = createServedClaims(options.jwtSecret)
  // The resources not served at their latest version: all that a reconcile without a rebuild
  // looks at, so that one watch event does not walk every tenant.
  const pending = new Set<string>()

  let chain: Promise<unknown> = Promise.resolve()
  const enqueue = <T>(operation: () => Promise<T>, fallback: T): Promise<T> => {
    const next = chain.then(operation).catch((error: unknown) => {
      logger.error({ err: error }, 'applying a Tenant change failed unexpectedly')
      return fallback
    })
    chain = next
    return next
  }

  const refuse = (
    name: string,
    seen: Seen,
    problems: string[],
    build: boolean,
    releases: number,
  ): void => {
    const summary = problems.join('\n')
    const before = refused.get(name)
    refused.set(name, {
      resourceVersion: seen.resourceVersion,
      summary,
      build,
      releases,
      retry: false,
    })
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

  /** Records `tenant` as served from `seen` (built already, its claims in the index). */
  const accepted = (name: string, seen: Seen, tenant: Tenant, rebuild: boolean): void => {
    const current = served.get(name)
    served.set(name, { resourceVersion: seen.resourceVersion, tenant })
    refused.delete(name)
    pending.delete(name)
    if (!rebuild || current === undefined) {
      logger.info(
        { tenant: name, namespace, resourceVersion: seen.resourceVersion, hosts: tenant.hosts },
        current === undefined ? 'Tenant added' : 'Tenant changed',
      )
    }
  }

  /** Labels, annotations or status changed, not the tenant: nothing to rebuild. */
  const unchanged = (name: string, tenant: Tenant, rebuild: boolean): boolean => {
    const current = served.get(name)
    return !rebuild && current !== undefined && isDeepStrictEqual(current.tenant, tenant)
  }
  /** Records that the served tenant is `seen` too, as it was built. */
  const keep = (name: string, seen: Seen): void => {
    const current = served.get(name)
    if (current !== undefined)
      served.set(name, { ...current, resourceVersion: seen.resourceVersion })
    refused.delete(name)
    pending.delete(name)
  }

  /**
   * Whether `seen` is the version validation refused, and no claim has been given up since: it
   * would be refused again, so it is not checked on every event of other tenants. Asked right
   * before it would be checked, so that a claim given up earlier in the same reconcile counts.
   */
  const refusedAsBefore = (name: string, seen: Seen, rebuild: boolean): boolean => {
    const refusal = refused.get(name)
    return (
      !rebuild &&
      refusal !== undefined &&
      !refusal.build &&
      !refusal.retry &&
      refusal.resourceVersion === seen.resourceVersion &&
      refusal.releases === claims.releases()
    )
  }

  /** Tries to serve the latest version of one resource; answers whether it is served. */
  const attempt = async (
    name: string,
    seen: Seen,
    rebuild: boolean,
    fresh: FreshProviders,
  ): Promise<boolean> => {
    if (target === undefined || refusedAsBefore(name, seen, rebuild)) return false
    const releases = claims.releases()
    const checked = validateTenantResource(where(name), seen.object, claims, options)
    if (!checked.ok) {
      refuse(name, seen, checked.issues, false, releases)
      return false
    }
    if (unchanged(name, checked.tenant, rebuild)) {
      claims.serve(name, checked.unit)
      keep(name, seen)
      return true
    }
    try {
      await target.update({ put: [checked.tenant], remove: [], freshProviders: fresh() })
    } catch (error) {
      refuse(name, seen, describeProblems(error), true, releases)
      return false
    }
    claims.serve(name, checked.unit)
    accepted(name, seen, checked.tenant, rebuild)
    return true
  }

  /**
   * Tries to serve the latest versions of `work`, in order, with one build: each resource is
   * checked against the tenants served and the ones of `work` taken before it, as one attempt
   * after the other would. When the build fails, nothing of it is kept and each half is tried
   * on its own, down to single attempts. Answers whether every resource is served.
   */
  const attemptBatch = async (
    work: readonly (readonly [string, Seen])[],
    rebuild: boolean,
    fresh: FreshProviders,
  ): Promise<boolean> => {
    if (target === undefined) return false
    const [only] = work
    if (work.length === 1 && only !== undefined) return attempt(only[0], only[1], rebuild, fresh)
    type Outcome =
      | { name: string; seen: Seen; issues: string[]; releases: number }
      | { name: string; seen: Seen; tenant: Tenant; build: boolean }
    const outcomes: Outcome[] = []
    const undo: (() => void)[] = []
    let skipped = false
    for (const [name, seen] of work) {
      if (refusedAsBefore(name, seen, rebuild)) {
        skipped = true
        continue
      }
      const releases = claims.releases()
      const checked = validateTenantResource(where(name), seen.object, claims, options)
      if (!checked.ok) {
        outcomes.push({ name, seen, issues: checked.issues, releases })
        continue
      }
      // Claimed at once, so that the next resources of the batch are checked against it.
      const before = claims.get(name)
      claims.serve(name, checked.unit)
      undo.push(() => (before === undefined ? claims.forget(name) : claims.serve(name, before)))
      const build = !unchanged(name, checked.tenant, rebuild)
      outcomes.push({ name, seen, tenant: checked.tenant, build })
    }
    const put = outcomes.flatMap((outcome) =>
      'tenant' in outcome && outcome.build ? [outcome.tenant] : [],
    )
    if (put.length > 0) {
      try {
        await target.update({ put, remove: [], freshProviders: fresh() })
      } catch {
        // Which tenant failed is not known: the halves find it, each checked again without the
        // claims of this batch (a tenant not built holds no host).
        for (const step of undo.reverse()) step()
        const half = Math.ceil(work.length / 2)
        const first = await attemptBatch(work.slice(0, half), rebuild, fresh)
        const second = await attemptBatch(work.slice(half), rebuild, fresh)
        return first && second
      }
    }
    let converged = !skipped
    for (const outcome of outcomes) {
      if ('issues' in outcome) {
        refuse(outcome.name, outcome.seen, outcome.issues, false, outcome.releases)
        converged = false
      } else if (outcome.build) {
        accepted(outcome.name, outcome.seen, outcome.tenant, rebuild)
      } else {
        keep(outcome.name, outcome.seen)
      }
    }
    return converged
  }

  /**
   * Brings the served tenants to the latest resources. Oldest resources first, so that of two
   * new resources claiming one host, the older wins; the ones served already keep theirs.
   * Answers whether every resource is served as it is now.
   */
  const reconcile = async (rebuild: boolean): Promise<boolean> => {
    let converged = true
    const names = rebuild ? [...desired.keys()] : [...pending]
    const order = names
      .flatMap((name) => {
        const seen = desired.get(name)
        return seen === undefined ? [] : [[name, seen] as const]
      })
      .sort(
        ([a, x], [b, y]) =>
          (x.object.metadata.creationTimestamp ?? '').localeCompare(
            y.object.metadata.creationTimestamp ?? '',
          ) || a.localeCompare(b),
      )
    const work: (readonly [string, Seen])[] = []
    for (const [name, seen] of order) {
      const refusal = refused.get(name)
      // A build failure is retried on the resource's next change, a relist or SIGHUP, not on
      // every event of other tenants (nor is a validation failure: see refusedAsBefore).
      if (
        !rebuild &&
        refusal?.build === true &&
        !refusal.retry &&
        refusal.resourceVersion === seen.resourceVersion
      ) {
        converged = false
        continue
      }
      work.push([name, seen])
    }
    // Afresh for a rebuild (the provider directory changed, SIGHUP) and when a resource that
    // failed to build is tried again (its script may be fixed; Node keeps a failed import).
    // Otherwise a script already imported is shared: Node never unloads a module, so a fresh
    // import per batch or per watch event would stay in memory for the life of the process.
    let fresh = rebuild || work.some(([name]) => refused.get(name)?.build === true)
    const freshOnce: FreshProviders = () => {
      const asked = fresh
      fresh = false
      return asked
    }
    for (let from = 0; from < work.length; from += BATCH_SIZE) {
      const batch = work.slice(from, from + BATCH_SIZE)
      if (!(await attemptBatch(batch, rebuild, freshOnce))) converged = false
    }
    return converged
  }

  /** Stops serving `names`, in one change of the served set however many there are. */
  const remove = async (names: readonly string[]): Promise<void> => {
    for (const name of names) {
      desired.delete(name)
      refused.delete(name)
      pending.delete(name)
    }
    const gone = names.filter((name) => served.has(name))
    if (gone.length === 0 || target === undefined) return
    await target.update({ put: [], remove: gone })
    for (const name of gone) {
      served.delete(name)
      claims.forget(name)
      logger.info({ tenant: name, namespace }, 'Tenant removed')
    }
  }

  const want = (object: Resource): void => {
    const { name, resourceVersion } = object.metadata
    desired.set(name, { object, resourceVersion })
    if (served.get(name)?.resourceVersion === resourceVersion) pending.delete(name)
    else pending.add(name)
  }

  const applyList = async (items: readonly Resource[]): Promise<void> => {
    const names = new Set(items.map((item) => item.metadata.name))
    await remove([...served.keys()].filter((name) => !names.has(name)))
    desired.clear()
    pending.clear()
    for (const [name, refusal] of refused) {
      // A relist retries every refused resource; refusals that come back the same stay quiet.
      if (names.has(name)) refusal.retry = true
      else refused.delete(name)
    }
    for (const item of items) want(item)
    await reconcile(false)
  }

  const applyEvent = async (type: string, object: Resource): Promise<void> => {
    if (type === 'DELETED') await remove([object.metadata.name])
    else want(object)
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
