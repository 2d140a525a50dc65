/**
 * Where the issuer's tenants come from (TESSERA_CONFIG_SOURCE): the contract between a source
 * and the issuer that serves what it hands over.
 *
 * @module
 */
import { ConfigError, formatConfigIssue } from '@tessera/config-schema'
import type { Tenant } from '@tessera/config-schema'

/**
 * What a source changes in the issuer. Each call builds what it is given (provider scripts, key
 * rings) and swaps it in only when everything built; on failure it throws and the tenants served
 * before stay exactly as they were. Calls never overlap: the issuer runs them one at a time.
 */
export interface TenantTarget {
  /** Serves exactly `tenants`, all or nothing (a reload of the files source). */
  replaceAll(tenants: readonly Tenant[]): Promise<void>
  /**
   * Serves the new or changed tenants of `changes.put` and stops serving those named in
   * `changes.remove`, in one swap, all or nothing: when any tenant cannot be built it throws and
   * nothing changes. Every other tenant is left alone, and the work is in proportion to the
   * tenants changed (the files source's reload of one changed file among thousands, one Tenant
   * resource's watch event).
   */
  update(changes: TenantChanges): Promise<void>
}

/** Tenants to serve and to stop serving, for {@link TenantTarget.update}. */
export interface TenantChanges {
  put: readonly Tenant[]
  remove: readonly string[]
  /**
   * Import the provider scripts of `put` afresh (a script changed, or SIGHUP). Otherwise a
   * script some tenant already uses is shared as it was imported.
   */
  freshProviders?: boolean
}

/** A configuration source: `files` (TESSERA_CONFIG on disk) or `kubernetes` (Tenant resources). */
export interface TenantSource {
  /**
   * Whether the issuer may listen before the first configuration is applied. `files` does not:
   * a bad configuration stops the start. `kubernetes` does, with /readyz answering
   * 503 until the first list of Tenant resources is applied.
   */
  readonly listenBeforeLoaded: boolean
  /**
   * Applies the first configuration to `target`, then follows changes. `files` rejects when the
   * configuration has any problem; `kubernetes` retries with backoff until it succeeds and
   * rejects only when closed first.
   */
  start(target: TenantTarget): Promise<void>
  /** Whether the first configuration has been applied (for /readyz). */
  loaded(): boolean
  /**
   * Reads the configuration again (SIGHUP) and re-imports provider scripts. Answers whether
   * everything read was taken; what was refused is logged, one line per problem.
   */
  reload(): Promise<boolean>
  /** Stops following changes (watchers, connections, timers). */
  close(): Promise<void>
}

/** A refused configuration, one line per problem, for the log. */
export function describeProblems(error: unknown): string[] {
  if (error instanceof ConfigError) return error.issues.map(formatConfigIssue)
  if (error instanceof Error) return error.message.split('\n')
  return [String(error)]
}
