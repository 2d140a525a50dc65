/**
 * The tenants the `kubernetes` source serves: the latest version of each resource, the version
 * being served, and the last refusal. Each resource is validated on its own, against an index of
 * what the served tenants claim; a refused one keeps its last good version serving (or stays
 * absent) and touches no other tenant. Tenants are built in batches (a first list of thousands),
 * a batch that fails being split until the tenant that cannot be built is found.
 *
 * @module
 */
import type { TenantTarget } from '../source.js'
import { serveInHalves } from './attempt.js'
import type { FreshProviders, Run, Work } from './attempt.js'
import { createBook } from './book.js'
import type { Book, TenantSetOptions } from './book.js'
import type { Resource } from './resources.js'

export type { TenantSetOptions } from './book.js'

/**
 * Most tenants built in one `TenantTarget.update`: a batch is all or nothing, and one that fails
 * is split in halves, so that a tenant that cannot be built costs a few smaller builds.
 */
export const BATCH_SIZE = 500

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
  const book = createBook(options)
  const { desired, served, refused, pending } = book

  let chain: Promise<unknown> = Promise.resolve()
  const enqueue = <T>(operation: () => Promise<T>, fallback: T): Promise<T> => {
    const next = chain.then(operation).catch((error: unknown) => {
      logger.error({ err: error }, 'applying a Tenant change failed unexpectedly')
      return fallback
    })
    chain = next
    return next
  }

  const applyList = async (items: readonly Resource[]): Promise<void> => {
    const names = new Set(items.map((item) => item.metadata.name))
    await remove(
      book,
      [...served.keys()].filter((name) => !names.has(name)),
    )
    desired.clear()
    pending.clear()
    for (const [name, refusal] of refused) {
      // A relist retries every refused resource; refusals that come back the same stay quiet.
      if (names.has(name)) refusal.retry = true
      else refused.delete(name)
    }
    for (const item of items) want(book, item)
    await reconcile(book, false)
  }

  const applyEvent = async (type: string, object: Resource): Promise<void> => {
    if (type === 'DELETED') await remove(book, [object.metadata.name])
    else want(book, object)
    // Also after a deletion: a resource refused for a host the deleted one held may now fit.
    await reconcile(book, false)
  }

  return {
    attach(to) {
      book.target = to
    },
    applyList: (items) => enqueue(() => applyList(items), undefined),
    applyEvent: (type, object) => enqueue(() => applyEvent(type, object), undefined),
    rebuildAll: () =>
      enqueue(async () => {
        const converged = await reconcile(book, true)
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

/**
 * Brings the served tenants to the latest resources. Oldest resources first, so that of two
 * new resources claiming one host, the older wins; the ones served already keep theirs.
 * Answers whether every resource is served as it is now.
 */
async function reconcile(book: Book, rebuild: boolean): Promise<boolean> {
  const { desired, refused, pending } = book
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
  const work: Work[] = []
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
  const run: Run = { rebuild, fresh: freshOnce, converged }
  for (let from = 0; from < work.length; from += BATCH_SIZE) {
    await serveInHalves(book, work.slice(from, from + BATCH_SIZE), run)
  }
  return run.converged
}

/** Stops serving `names`, in one change of the served set however many there are. */
async function remove(book: Book, names: readonly string[]): Promise<void> {
  const { desired, served, refused, pending, target, claims } = book
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
    book.options.logger.info({ tenant: name, namespace: book.options.namespace }, 'Tenant removed')
  }
}

/** Records `object` as the latest version of its resource. */
function want(book: Book, object: Resource): void {
  const { name, resourceVersion } = object.metadata
  book.desired.set(name, { object, resourceVersion })
  if (book.served.get(name)?.resourceVersion === resourceVersion) book.pending.delete(name)
  else book.pending.add(name)
}
