/**
 * One reload of the files source, once the changed files are read: admission against the index,
 * the tenants to build, units built in halves, and what is served afterwards recorded and logged.
 *
 * @module
 */
import type { ConfigFile, ConfigIndex, Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { admitChanges, readmitLastGood } from '../reconcile/admission.js'
import { buildInHalves } from '../reconcile/halves.js'
import type { Refusal } from '../reconcile/halves.js'
import { unitsOf } from '../reconcile/units.js'
import type { Unit } from '../reconcile/units.js'
import { describeProblems } from '../source.js'
import type { TenantTarget } from '../source.js'
import { planReload } from './plan.js'

/** A tenant file as last seen, and the version of it being served. */
export interface Entry {
  /** Identifies the version last read (inode, size, times): an unchanged file is not read. */
  stamp: string
  /** The last good version, whose tenants are served; undefined when it never was good. */
  served: ConfigFile | undefined
}

/** A file read again because its stamp changed (or SIGHUP), and its new version. */
export interface ChangedFile {
  name: string
  stamp: string
  file: ConfigFile
}

/** What a reload found on disk. */
export interface FileChanges {
  changed: readonly ChangedFile[]
  /** The files gone since last read. */
  removed: readonly string[]
  /** The files under the path that changed and are not YAML (provider scripts, others). */
  other: readonly string[]
  /** SIGHUP: every file was read and every tenant is rebuilt. */
  all: boolean
}

/** The state a reload reads and updates. */
export interface ReloadState {
  /** By file name as shown in issues. */
  entries: Map<string, Entry>
  /** The tenants served, by name. */
  served: Map<string, Tenant>
  logger: Logger
  /** A file as the log shows it. */
  shown: (file: string) => string
}

const NO_TENANT_LEFT = 'no tenant would be left'

/**
 * Takes `changes` file by file: a file with any problem, or whose tenants cannot be built, is
 * refused alone and keeps its last good version; the others are taken. A reload that would leave
 * no tenant is refused. Answers whether everything read was taken.
 */
export async function applyFileChanges(
  state: ReloadState,
  to: TenantTarget,
  claims: ConfigIndex,
  changes: FileChanges,
): Promise<boolean> {
  const { entries, served, logger } = state
  const { changed, removed, all, other } = changes
  const lastGood = (name: string) => entries.get(name)?.served
  const { accepted, refused, undo } = admitChanges(claims, changed, removed, lastGood)
  const plan = planReload({ accepted, removed, lastGood, served, all, other })
  // Any tenant that would stay served; a refusal here leaves everything as it was.
  if (plan.left <= 0) {
    undo()
    logger.error(
      { removed: plan.remove },
      'configuration reload refused: no tenant would be left; still serving the previous configuration',
    )
    return false
  }

  const units = unitsOf({ accepted, removed, put: plan.put, remove: plan.remove, lastGood })
  const failures = await buildInHalves(units, {
    build: async (part) => {
      const put = part.flatMap((unit) => unit.put)
      const remove = part.flatMap((unit) => unit.remove)
      try {
        await to.update({ put, remove, freshProviders: plan.fresh })
      } catch (error) {
        return { ok: false, error }
      }
      for (const name of remove) served.delete(name)
      for (const tenant of put) served.set(tenant.name, tenant)
      return { ok: true }
    },
    // The whole reload leaves some tenant (checked before), but not every part of it need:
    // removing a file whose replacement could not be built would leave none.
    refuse: (part) => (tenantsLeft(served, part) <= 0 ? new Error(NO_TENANT_LEFT) : undefined),
  })
  const refusedFiles = new Set(failures.flatMap((failure) => failure.item.files))
  for (const { name, problems } of readmitLastGood(claims, accepted, refusedFiles, lastGood)) {
    logger.error(
      { file: state.shown(name), problems },
      'configuration reload refused in part: the last good version of this file claims what a file taken now holds; the file taken keeps it',
    )
  }

  for (const { name, stamp, file } of accepted) {
    if (!refusedFiles.has(name)) entries.set(name, { stamp, served: file })
  }
  for (const name of removed) if (!refusedFiles.has(name)) entries.delete(name)
  for (const { name, stamp } of changed) {
    const entry = entries.get(name)
    if (refused.has(name)) entries.set(name, { stamp, served: entry?.served })
  }
  logOutcome(state, { changes, units, failures, refused })
  return refused.size === 0 && failures.length === 0
}

/** Logs the units that could not be built, the files refused, and what was taken. */
function logOutcome(
  { logger, shown }: ReloadState,
  outcome: {
    changes: FileChanges
    units: readonly Unit[]
    failures: readonly Refusal<Unit>[]
    refused: ReadonlyMap<string, string[]>
  },
): void {
  const { changes, units, failures, refused } = outcome
  const failed = new Set(failures.map((failure) => failure.item))
  const taken = units.filter((unit) => !failed.has(unit))
  const anyTaken = taken.length > 0
  for (const { item: unit, error } of failures) {
    logger.error(
      {
        ...(unit.files.length > 0 ? { files: unit.files.map(shown) } : {}),
        tenants: [...unit.put.map((tenant) => tenant.name), ...unit.remove].slice(0, 100),
        problems: describeProblems(error),
      },
      anyTaken
        ? 'configuration reload refused in part: these tenants could not be built; they keep their last good version'
        : 'configuration reload refused: the changed tenants could not be built; still serving their previous versions',
    )
  }
  if (refused.size > 0) {
    logger.error(
      { problems: [...refused.values()].flat(), files: [...refused.keys()].map(shown) },
      'configuration refused in part: the tenants of these files keep their last good version',
    )
  }
  if (anyTaken || failures.length === 0) {
    const tenants = taken.flatMap((unit) => unit.put.map((tenant) => tenant.name))
    const gone = taken.flatMap((unit) => unit.remove)
    logger.info(
      {
        files: changes.changed.length + changes.removed.length,
        ...(tenants.length > 0 ? { tenants: tenants.slice(0, 100) } : {}),
        ...(gone.length > 0 ? { removed: gone.slice(0, 100) } : {}),
      },
      'configuration reloaded',
    )
  }
}

/** How many tenants would be served once `work` is taken. */
function tenantsLeft(served: ReadonlyMap<string, Tenant>, work: readonly Unit[]): number {
  let count = served.size
  for (const unit of work) {
    for (const name of unit.remove) if (served.has(name)) count--
    for (const tenant of unit.put) if (!served.has(tenant.name)) count++
  }
  return count
}
