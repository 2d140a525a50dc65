/**
 * What the `kubernetes` source knows of each Tenant resource: its latest version, the version
 * being served, and its last refusal; and the records and logs of a resource served, kept or
 * refused.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import type { TenantTarget } from '../source.js'
import type { Resource } from './resources.js'
import { createServedClaims } from '../reconcile/claims.js'
import type { ServedClaims } from '../reconcile/claims.js'
import type { ValidationContext } from './validate.js'

/** The latest version of a resource, as listed or watched. */
export interface Seen {
  object: Resource
  resourceVersion: string | undefined
}

/** A tenant being served, and the resource version it came from. */
export interface Served {
  resourceVersion: string | undefined
  tenant: Tenant
}

/** The last refusal of a resource, so that a retry finding the same problems stays quiet. */
export interface Refusal {
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

export interface TenantSetOptions extends ValidationContext {
  namespace: string
  logger: Logger
}

/** The resources of one namespace and the tenants served from them. */
export interface Book {
  readonly options: TenantSetOptions
  /** Where built tenants go; nothing is served before it is attached. */
  target: TenantTarget | undefined
  readonly desired: Map<string, Seen>
  readonly served: Map<string, Served>
  readonly refused: Map<string, Refusal>
  /**
   * What the served tenants claim (names, hosts, client_ids): a resource is checked against it
   * in time proportional to the resource, not to the tenants served.
   */
  readonly claims: ServedClaims
  /**
   * The resources not served at their latest version: all that a reconcile without a rebuild
   * looks at, so that one watch event does not walk every tenant.
   */
  readonly pending: Set<string>
}

export function createBook(options: TenantSetOptions): Book {
  return {
    options,
    target: undefined,
    desired: new Map(),
    served: new Map(),
    refused: new Map(),
    claims: createServedClaims(options.jwtSecret),
    pending: new Set(),
  }
}

/** Records and logs a refusal of `seen`; the same problems again stay quiet. */
export function refuse(
  book: Book,
  name: string,
  seen: Seen,
  refusal: { problems: string[]; build: boolean; releases: number },
): void {
  const { problems, build, releases } = refusal
  const { logger, namespace } = book.options
  const summary = problems.join('\n')
  const before = book.refused.get(name)
  book.refused.set(name, {
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
  const current = book.served.get(name)
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
export function accept(
  book: Book,
  name: string,
  seen: Seen,
  tenant: Tenant,
  rebuild: boolean,
): void {
  const { logger, namespace } = book.options
  const current = book.served.get(name)
  book.served.set(name, { resourceVersion: seen.resourceVersion, tenant })
  book.refused.delete(name)
  book.pending.delete(name)
  if (!rebuild || current === undefined) {
    logger.info(
      { tenant: name, namespace, resourceVersion: seen.resourceVersion, hosts: tenant.hosts },
      current === undefined ? 'Tenant added' : 'Tenant changed',
    )
  }
}

/** Labels, annotations or status changed, not the tenant: nothing to rebuild. */
export function unchanged(book: Book, name: string, tenant: Tenant, rebuild: boolean): boolean {
  const current = book.served.get(name)
  return !rebuild && current !== undefined && isDeepStrictEqual(current.tenant, tenant)
}

/** Records that the served tenant is `seen` too, as it was built. */
export function keep(book: Book, name: string, seen: Seen): void {
  const current = book.served.get(name)
  if (current !== undefined)
    book.served.set(name, { ...current, resourceVersion: seen.resourceVersion })
  book.refused.delete(name)
  book.pending.delete(name)
}

/**
 * Whether `seen` is the version validation refused, and no claim has been given up since: it
 * would be refused again, so it is not checked on every event of other tenants. Asked right
 * before it would be checked, so that a claim given up earlier in the same reconcile counts.
 */
export function refusedAsBefore(book: Book, name: string, seen: Seen, rebuild: boolean): boolean {
  const refusal = book.refused.get(name)
  return (
    !rebuild &&
    refusal !== undefined &&
    !refusal.build &&
    !refusal.retry &&
    refusal.resourceVersion === seen.resourceVersion &&
    refusal.releases === book.claims.releases()
  )
}
