/**
 * Serving the latest versions of Tenant resources: each validated against the claims of the
 * tenants served and of the ones before it, the valid ones built with one `update`, a batch that
 * fails built in halves down to the resource that cannot be built.
 *
 * @module
 */
import type { Tenant } from '@tessera/config-schema'
import { buildInHalves } from '../reconcile/halves.js'
import type { Built } from '../reconcile/halves.js'
import { describeProblems } from '../source.js'
import { accept, keep, refuse, refusedAsBefore, unchanged } from './book.js'
import type { Book, Seen } from './book.js'
import { validateTenantResource } from './validate.js'

/**
 * Whether the provider scripts of a reconcile's builds are imported afresh: once per reconcile,
 * by its first build, and only when asked. Node never unloads an ES module, so every fresh import
 * of a script is a module the process keeps.
 */
export type FreshProviders = () => boolean

/** One reconcile's builds. */
export interface Run {
  /** Every resource is built again, unchanged or not. */
  rebuild: boolean
  fresh: FreshProviders
  /** Whether every resource tried so far is served at its latest version. */
  converged: boolean
}

/** A resource to serve: its name and its latest version. */
export type Work = readonly [string, Seen]

// No build failed (a resource refused by validation, or served, is no build failure).
const BUILT: Built = { ok: true }

/**
 * Tries to serve the latest versions of `batch`, in order, with as few builds as it takes: all
 * at once, and when the build fails, in halves down to single resources.
 */
export async function serveInHalves(book: Book, batch: readonly Work[], run: Run): Promise<void> {
  await buildInHalves(batch, { build: (part) => attemptPart(book, part, run) })
}

/**
 * Tries to serve the latest versions of `work`, in order, with one build: each resource is
 * checked against the tenants served and the ones of `work` taken before it, as one attempt
 * after the other would. When the build fails, nothing of it is kept.
 */
async function attemptPart(book: Book, work: readonly Work[], run: Run): Promise<Built> {
  const { target, claims } = book
  if (target === undefined) {
    run.converged = false
    return BUILT
  }
  const [only] = work
  if (work.length === 1 && only !== undefined) return attemptOne(book, only[0], only[1], run)
  type Outcome =
    | { name: string; seen: Seen; issues: string[]; releases: number }
    | { name: string; seen: Seen; tenant: Tenant; build: boolean }
  const outcomes: Outcome[] = []
  const undo: (() => void)[] = []
  let skipped = false
  for (const [name, seen] of work) {
    if (refusedAsBefore(book, name, seen, run.rebuild)) {
      skipped = true
      continue
    }
    const releases = claims.releases()
    const checked = validateTenantResource(where(book, name), seen.object, claims, book.options)
    if (!checked.ok) {
      outcomes.push({ name, seen, issues: checked.issues, releases })
      continue
    }
    // Claimed at once, so that the next resources of the batch are checked against it.
    const before = claims.get(name)
    claims.serve(name, checked.unit)
    undo.push(() => (before === undefined ? claims.forget(name) : claims.serve(name, before)))
    const build = !unchanged(book, name, checked.tenant, run.rebuild)
    outcomes.push({ name, seen, tenant: checked.tenant, build })
  }
  const put = outcomes.flatMap((outcome) =>
    'tenant' in outcome && outcome.build ? [outcome.tenant] : [],
  )
  if (put.length > 0) {
    try {
      await target.update({ put, remove: [], freshProviders: run.fresh() })
    } catch (error) {
      // Which tenant failed is not known: the halves find it, each checked again without the
      // claims of this batch (a tenant not built holds no host).
      for (const step of undo.reverse()) step()
      return { ok: false, error }
    }
  }
  if (skipped) run.converged = false
  for (const outcome of outcomes) {
    if ('issues' in outcome) {
      const { issues: problems, releases } = outcome
      refuse(book, outcome.name, outcome.seen, { problems, build: false, releases })
      run.converged = false
    } else if (outcome.build) {
      accept(book, outcome.name, outcome.seen, outcome.tenant, run.rebuild)
    } else {
      keep(book, outcome.name, outcome.seen)
    }
  }
  return BUILT
}

/** Tries to serve the latest version of one resource. */
async function attemptOne(book: Book, name: string, seen: Seen, run: Run): Promise<Built> {
  const { target, claims } = book
  if (target === undefined || refusedAsBefore(book, name, seen, run.rebuild)) {
    run.converged = false
    return BUILT
  }
  const releases = claims.releases()
  const checked = validateTenantResource(where(book, name), seen.object, claims, book.options)
  if (!checked.ok) {
    refuse(book, name, seen, { problems: checked.issues, build: false, releases })
    run.converged = false
    return BUILT
  }
  if (unchanged(book, name, checked.tenant, run.rebuild)) {
    claims.serve(name, checked.unit)
    keep(book, name, seen)
    return BUILT
  }
  try {
    await target.update({ put: [checked.tenant], remove: [], freshProviders: run.fresh() })
  } catch (error) {
    refuse(book, name, seen, { problems: describeProblems(error), build: true, releases })
    run.converged = false
    return { ok: false, error }
  }
  claims.serve(name, checked.unit)
  accept(book, name, seen, checked.tenant, run.rebuild)
  return BUILT
}

/** A resource as named in issues. */
function where(book: Book, name: string): string {
  return `kubernetes:${book.options.namespace}/${name}`
}
