/**
 * Claims by name: what each tenant served claims (names, hosts, client_ids), admitted to one
 * config-schema `ConfigIndex`, so that a resource is checked in place of its own served version
 * in time proportional to that resource. The kubernetes source checks and serves its Tenant
 * resources one at a time against it.
 *
 * @module
 */
import { createConfigIndex } from '@tessera/config-schema'
import type { ConfigFile, ConfigIssue } from '@tessera/config-schema'

/**
 * The names, hosts and client_ids that the tenants served claim, by resource name (a
 * config-schema `ConfigIndex`). Every operation costs time in proportion to one resource.
 */
export interface ServedClaims {
  /**
   * The problems `unit` has beside what the tenants served under other names claim (its own
   * served version, if any, left out); changes nothing.
   */
  check(name: string, unit: ConfigFile): ConfigIssue[]
  /**
   * `name` now claims what `unit` does instead of what it claimed before. Only for a unit that
   * {@link ServedClaims.check} found no problem with, since: the served tenants never clash.
   */
  serve(name: string, unit: ConfigFile): void
  /** `name` claims nothing any more (its tenant is no longer served). */
  forget(name: string): void
  /** What `name` claims now, if it is served. */
  get(name: string): ConfigFile | undefined
  /**
   * How many times claims were given up so far (a tenant forgotten, or served again in place of
   * its previous claims). A resource refused for what others claim can only fit once this grows.
   */
  releases(): number
}

/** No tenant served yet; `jwtSecret` is the JWT_SECRET setting, for the HS256 rule. */
export function createServedClaims(jwtSecret: string | undefined): ServedClaims {
  const index = createConfigIndex(jwtSecret)
  const units = new Map<string, ConfigFile>()
  let releases = 0
  const forget = (name: string): void => {
    const current = units.get(name)
    if (current === undefined) return
    index.release(current)
    units.delete(name)
    releases++
  }
  return {
    check(name, unit) {
      // Admitted for a moment in place of its served version, then taken out again; all of it
      // synchronous, so nothing else sees the index in between.
      const current = units.get(name)
      if (current !== undefined) index.release(current)
      const issues = index.admit(unit)
      index.release(unit)
      if (current !== undefined) index.admit(current)
      return issues
    },
    serve(name, unit) {
      forget(name)
      index.admit(unit)
      units.set(name, unit)
    },
    forget,
    get: (name) => units.get(name),
    releases: () => releases,
  }
}
