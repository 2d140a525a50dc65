/**
 * The `files` source: tenant YAML under TESSERA_CONFIG, read whole at start and file by file
 * after.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, sep } from 'node:path'
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import {
  cachedFileExists,
  findConfigFiles,
  formatConfigIssue,
  loadConfigFiles,
  readConfigFile,
} from '@tessera/config-schema'
import type { ConfigFile, ConfigIndex, ConfigIssue, Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import type { ParseCacheSession } from '../startup/parse-cache.js'
import { collectGarbage } from '../startup/start-garbage.js'
import { describeProblems } from './source.js'
import type { TenantSource, TenantTarget } from './source.js'
import { watchPath } from './watch-path.js'

export interface FilesSourceOptions {
  /** TESSERA_CONFIG: a YAML file or a directory searched recursively. */
  path: string
  /** Environment for `{env: VAR}` references. */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting. */
  jwtSecret: string | undefined
  /** Takes client secrets shorter than 16 characters instead of refusing them (dev warns). */
  shortClientSecrets?: ((issue: ConfigIssue) => void) | undefined
  logger: Logger
  /** Reload on every change under `path` (the CLI does; embedders and tests call `reload`). */
  watch: boolean
  /**
   * The parse results kept in the database, for the first load (see parse-cache.ts); undefined
   * when there are none to keep (no KEY_ENCRYPTION_SECRET). A cache that cannot be read is none.
   */
  parseCache?: () => Promise<ParseCacheSession>
  /**
   * Store what the first load missed (default true). With `--workers` only worker 1 does: the
   * primary and the other workers read the cache and leave storing it to that one.
   */
  storeParseResults?: boolean
}

/** A tenant file as last seen, and the version of it being served. */
interface Entry {
  /** Identifies the version last read (inode, size, times): an unchanged file is not read. */
  stamp: string
  /** The last good version, whose tenants are served; undefined when it never was good. */
  served: ConfigFile | undefined
}

/** What a reload looks at. */
type Scope = { kind: 'all' } | { kind: 'scan' } | { kind: 'paths'; paths: ReadonlySet<string> }

// A full re-read reads this many files between two turns of the event loop, so that requests are
// still answered while ten thousand files are read.
const FILES_PER_TURN = 200

const YAML_FILE = /\.ya?ml$/i

// The parse results the first load missed are stored this long after it, once the issuer listens.
const SAVE_CACHE_AFTER_MS = 1_000

// Below this, what the first load leaves behind is not worth a pause.
const COLLECT_AFTER_TENANTS = 1_000

/**
 * Reads every tenant from `path` and serves them all or none at start: the first load throws on
 * any problem (`ConfigError`, `ProviderError`, ...), before the issuer listens.
 *
 * After that, file by file. A change on disk (when watching) re-reads only the files the change
 * touched, checks them against the other files' tenants (names, hosts and client_ids stay
 * unique), and puts or removes only the tenants of those files: its cost follows the files
 * changed, not the files there are. A file with any problem is refused alone: its tenants keep
 * their last good version (or stay absent) and the other files' changes are taken; every problem
 * is logged as `file:line: field: problem`. So is a file whose tenants cannot be built (a
 * provider script that throws on import): the tenants are built all at once, and when that
 * fails, in halves down to the files that fail. SIGHUP re-reads every file and imports the
 * provider scripts afresh, with the same rule per file. A change to a provider script (any file
 * under `path` that is not YAML) rebuilds the tenants that use it with a fresh import; a change
 * to another file there rebuilds every tenant; a tenant that cannot be rebuilt keeps serving its
 * previous build. A reload that would leave no tenant is refused.
 */
export function createFilesSource(options: FilesSourceOptions): TenantSource {
  const { logger } = options
  let target: TenantTarget | undefined
  let isLoaded = false
  let stopWatching: (() => void) | undefined
  let closed = false
  let directory = false
  let index: ConfigIndex | undefined
  /** By file name as shown in issues (`path` joined with the file's path inside it). */
  const entries = new Map<string, Entry>()
  /** The tenants served, by name. */
  const served = new Map<string, Tenant>()
  const parseOptions = () => ({
    env: options.env,
    jwtSecret: options.jwtSecret,
    shortClientSecrets: options.shortClientSecrets,
    // One reload looks each provider script up once, however many tenants name it.
    fileExists: cachedFileExists(),
  })

  let reloading: Promise<boolean> = Promise.resolve(true)
  const enqueue = (scope: Scope): Promise<boolean> => {
    // One reload at a time: a burst of file events must not interleave two builds.
    reloading = reloading.then(async () => {
      if (target === undefined || index === undefined || closed) return false
      try {
        return await reloadFiles(target, index, scope)
      } catch (error) {
        logger.error(
          { problems: describeProblems(error) },
          'configuration reload refused; still serving the previous configuration',
        )
        return false
      }
    })
    return reloading
  }

  /** The files to look at for `scope`, and the names under `path` that are not YAML files. */
  const candidates = async (scope: Scope): Promise<{ files: Set<string>; other: string[] }> => {
    const files = new Set<string>()
    const other: string[] = []
    if (!directory) {
      files.add(options.path)
      return { files, other }
    }
    if (scope.kind === 'paths' && !needsScan(scope.paths)) {
      for (const name of scope.paths) {
        const full = join(options.path, name)
        const found = statSync(full, { throwIfNoEntry: false })
        if (found?.isDirectory() === true) {
          for (const file of await findConfigFiles(full)) files.add(file)
        } else if (found !== undefined && !YAML_FILE.test(name)) {
          other.push(full)
        }
        if (YAML_FILE.test(name)) files.add(full)
        // A folder removed or renamed: whatever was read under it.
        const prefix = full + sep
        if (found === undefined || found.isDirectory()) {
          for (const known of entries.keys()) if (known.startsWith(prefix)) files.add(known)
        }
      }
      // Keeps the scripts' stamps current, so that a later scan does not find them changed again.
      if (other.length > 0) changedScripts()
      return { files, other }
    }
    for (const file of await findConfigFiles(options.path)) files.add(file)
    for (const known of entries.keys()) files.add(known)
    // Without names to go by, a provider script is known to have changed by its stamp.
    return { files, other: changedScripts() }
  }

  /**
   * The provider scripts of the tenants served that changed since last looked at: by stamp, then
   * by content, as a ConfigMap update makes every file anew whether it changed or not.
   */
  const scripts = new Map<string, { stamp: string; digest: string }>()
  const changedScripts = (): string[] => {
    const names = new Set<string>()
    for (const tenant of served.values()) for (const script of tenant.providers) names.add(script)
    const changed: string[] = []
    for (const script of names) {
      const found = statSync(script, { throwIfNoEntry: false })
      const stamp = found === undefined ? '' : stampOf(found)
      const seen = scripts.get(script)
      if (seen?.stamp === stamp) continue
      const digest = contentDigest(script)
      if (seen !== undefined && seen.digest !== digest) changed.push(script)
      scripts.set(script, { stamp, digest })
    }
    return changed
  }

  const reloadFiles = async (to: TenantTarget, claims: ConfigIndex, scope: Scope) => {
    const { files, other } = await candidates(scope)
    const parse = parseOptions()
    const changed: { name: string; stamp: string; file: ConfigFile }[] = []
    const removed: string[] = []
    let read = 0
    for (const name of [...files].sort(byCodeUnit)) {
      const found = statSync(name, { throwIfNoEntry: false })
      const entry = entries.get(name)
      if (found === undefined || !found.isFile()) {
        if (entry !== undefined) removed.push(name)
        continue
      }
      const stamp = stampOf(found)
      if (scope.kind !== 'all' && entry?.stamp === stamp) continue
      changed.push({ name, stamp, file: readConfigFile(name, parse) })
      if (++read % FILES_PER_TURN === 0) await yieldToRequests()
    }

    // The tenants of changed and removed files leave the index; a refused file's last good
    // version goes back in, and a file is accepted only against what stays.
    for (const name of [...changed.map((c) => c.name), ...removed]) {
      const previous = entries.get(name)?.served
      if (previous !== undefined) claims.release(previous)
    }
    const refused = new Map<string, string[]>()
    for (const { name, file } of changed) {
      if (file.issues.length === 0) continue
      // Refused already; its clashes with the files that stay are worth saying in the same go.
      const clashes = claims.admit(file)
      claims.release(file)
      const issues = [...file.issues, ...clashes].sort((a, b) => a.line - b.line)
      refused.set(name, issues.map(formatConfigIssue))
    }
    const readmitted = new Set<string>()
    let accepted: typeof changed
    for (;;) {
      for (const name of refused.keys()) {
        const previous = entries.get(name)?.served
        if (previous !== undefined && !readmitted.has(name)) claims.admit(previous)
        readmitted.add(name)
      }
      accepted = []
      let clash = false
      for (const change of changed) {
        if (refused.has(change.name)) continue
        const issues = claims.admit(change.file)
        if (issues.length === 0) {
          accepted.push(change)
          continue
        }
        // Refused: its last good version keeps its names and hosts, which may be what a file
        // accepted before it in this pass took. Check those again without it.
        claims.release(change.file)
        refused.set(change.name, issues.map(formatConfigIssue))
        clash = true
        break
      }
      if (!clash) break
      for (const { file } of accepted) claims.release(file)
    }
    const undo = () => {
      for (const { file } of accepted) claims.release(file)
      for (const name of [...accepted.map((c) => c.name), ...removed]) {
        const previous = entries.get(name)?.served
        if (previous !== undefined) claims.admit(previous)
      }
    }

    // The tenants those files served before, and the ones they serve now.
    const before = new Set<string>()
    for (const name of [...accepted.map((c) => c.name), ...removed]) {
      for (const tenant of entries.get(name)?.served?.tenants ?? []) before.add(tenant.name)
    }
    const after = new Map<string, Tenant>()
    for (const { file } of accepted)
      for (const tenant of file.tenants) after.set(tenant.name, tenant)
    const remove = [...before].filter((name) => !after.has(name))
    const removing = new Set(remove)
    const put = new Map<string, Tenant>()
    for (const [name, tenant] of after) {
      // An unchanged tenant keeps its runtime (and its provider scripts).
      if (scope.kind === 'all' || !isDeepStrictEqual(served.get(name), tenant))
        put.set(name, tenant)
    }
    // SIGHUP and changed scripts: every tenant concerned is rebuilt with fresh provider scripts.
    const fresh = scope.kind === 'all' || other.length > 0
    if (scope.kind === 'all' || other.some((file) => !isProviderScript(file))) {
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
    // Any tenant that would stay served; a refusal here leaves everything as it was.
    if (served.size - remove.length + [...after.keys()].filter((n) => !served.has(n)).length <= 0) {
      undo()
      logger.error(
        { removed: remove },
        'configuration reload refused: no tenant would be left; still serving the previous configuration',
      )
      return false
    }

    const units = unitsOf(accepted, removed, put, remove, (name) => entries.get(name)?.served)
    const failures = await buildInHalves(to, units, fresh)
    const failed = new Set(failures.map((failure) => failure.unit))
    const refusedFiles = new Set(failures.flatMap((failure) => failure.unit.files))
    readmitLastGood(claims, accepted, refusedFiles)

    for (const { name, stamp, file } of accepted) {
      if (!refusedFiles.has(name)) entries.set(name, { stamp, served: file })
    }
    for (const name of removed) if (!refusedFiles.has(name)) entries.delete(name)
    for (const { name, stamp } of changed) {
      const entry = entries.get(name)
      if (refused.has(name)) entries.set(name, { stamp, served: entry?.served })
    }
    const taken = units.filter((unit) => !failed.has(unit))
    const anyTaken = taken.length > 0
    for (const { unit, problems } of failures) {
      logger.error(
        {
          ...(unit.files.length > 0 ? { files: unit.files.map(shown) } : {}),
          tenants: [...unit.put.map((tenant) => tenant.name), ...unit.remove].slice(0, 100),
          problems,
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
          files: changed.length + removed.length,
          ...(tenants.length > 0 ? { tenants: tenants.slice(0, 100) } : {}),
          ...(gone.length > 0 ? { removed: gone.slice(0, 100) } : {}),
        },
        'configuration reloaded',
      )
    }
    return refused.size === 0 && failures.length === 0
  }

  /**
   * Builds `units` with few `update` calls: all at once, and when that throws, in halves down to
   * the units that cannot be built, as the kubernetes source does; one such unit among n costs
   * about 2·log2(n) calls. What a call builds is served at once. Answers the units refused.
   */
  const buildInHalves = async (
    to: TenantTarget,
    units: readonly Unit[],
    fresh: boolean,
  ): Promise<{ unit: Unit; problems: string[] }[]> => {
    const failures: { unit: Unit; problems: string[] }[] = []
    /** Answers whether every unit of `work` was taken; `failing`: it is known not to be. */
    const attempt = async (work: readonly Unit[], failing: boolean): Promise<boolean> => {
      if (work.length === 0) return true
      // The whole reload leaves some tenant (checked before), but not every part of it need:
      // removing a file whose replacement could not be built would leave none.
      if (tenantsLeft(work) <= 0) {
        for (const unit of work) failures.push({ unit, problems: [NO_TENANT_LEFT] })
        return false
      }
      // Trying again a part known to hold a unit that fails would only cost a build; a unit
      // alone is always tried, so that its refusal says its own problem.
      if (!failing || work.length === 1) {
        const put = work.flatMap((unit) => unit.put)
        const remove = work.flatMap((unit) => unit.remove)
        try {
          await to.update({ put, remove, freshProviders: fresh })
          for (const name of remove) served.delete(name)
          for (const tenant of put) served.set(tenant.name, tenant)
          return true
        } catch (error) {
          const [only] = work
          if (work.length === 1 && only !== undefined) {
            failures.push({ unit: only, problems: describeProblems(error) })
            return false
          }
        }
      }
      const half = Math.ceil(work.length / 2)
      const first = await attempt(work.slice(0, half), false)
      // The first half taken whole: what failed is in the second.
      const second = await attempt(work.slice(half), first)
      return first && second
    }
    await attempt(units, false)
    return failures
  }

  /** How many tenants would be served once `work` is taken. */
  const tenantsLeft = (work: readonly Unit[]): number => {
    let count = served.size
    for (const unit of work) {
      for (const name of unit.remove) if (served.has(name)) count--
      for (const tenant of unit.put) if (!served.has(tenant.name)) count++
    }
    return count
  }

  /**
   * The refused files' last good versions claim their names, hosts and client_ids again, once
   * every refused file has released its new version (two refused files may have traded a host).
   * A file taken may hold what a refused file's last good version claims (a host the new version
   * gave up, taken by another file in the same change): the file taken keeps it, as the issuer
   * already serves it there, and the clash is logged. The refused file's tenants serve the rest.
   */
  const readmitLastGood = (
    claims: ConfigIndex,
    accepted: readonly { name: string; file: ConfigFile }[],
    refusedFiles: ReadonlySet<string>,
  ): void => {
    for (const { name, file } of accepted) if (refusedFiles.has(name)) claims.release(file)
    for (const name of refusedFiles) {
      const previous = entries.get(name)?.served
      if (previous === undefined) continue
      const clashes = claims.admit(previous)
      if (clashes.length === 0) continue
      logger.error(
        { file: shown(name), problems: clashes.map(formatConfigIssue) },
        'configuration reload refused in part: the last good version of this file claims what a file taken now holds; the file taken keeps it',
      )
    }
  }

  /** Is `file` a provider script of some tenant served? */
  const isProviderScript = (file: string): boolean => {
    for (const tenant of served.values()) if (tenant.providers.includes(file)) return true
    return false
  }
  /** A file as the log shows it: relative to `path` when under it. */
  const shown = (file: string): string => {
    const inside = relative(options.path, file)
    return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? file : inside
  }

  let stopSaving: (() => void) | undefined
  let saving: Promise<void> | undefined
  /** The parse cache's session, or undefined when there is none or it cannot be read. */
  const openCache = async (): Promise<ParseCacheSession | undefined> => {
    if (options.parseCache === undefined) return undefined
    try {
      return await options.parseCache()
    } catch (error) {
      logger.warn(
        { err: error },
        'parse results of tenant files could not be read; parsing every file',
      )
      return undefined
    }
  }

  return {
    listenBeforeLoaded: false,
    async start(to) {
      target = to
      // Stamped before they are read: a file that changes meanwhile is read again on its event.
      const stamps = new Map<string, string>()
      for (const file of await findConfigFiles(options.path).catch(() => [])) {
        const found = statSync(file, { throwIfNoEntry: false })
        if (found !== undefined) stamps.set(file, stampOf(found))
      }
      const cached = await openCache()
      const loaded = await loadConfigFiles(options.path, {
        env: options.env,
        jwtSecret: options.jwtSecret,
        shortClientSecrets: options.shortClientSecrets,
        ...(cached === undefined ? {} : { parseCache: cached.cache }),
      })
      // The load's garbage goes before the tenants are built (see start-garbage.ts).
      if (loaded.tenants.length >= COLLECT_AFTER_TENANTS) collectGarbage()
      await to.replaceAll(loaded.tenants)
      directory = loaded.directory
      index = loaded.index
      for (const file of loaded.files) {
        entries.set(file.file, { stamp: stamps.get(file.file) ?? '', served: file })
      }
      for (const tenant of loaded.tenants) served.set(tenant.name, tenant)
      changedScripts()
      isLoaded = true
      if (cached !== undefined) {
        logger.info({ ...cached.counts }, 'tenant files read; parse results from the database')
      }
      if (cached !== undefined && options.storeParseResults !== false) {
        // The files that missed are parsed again and stored once the issuer listens.
        const files = loaded.files.map((file) => file.file)
        const saveTimer = setTimeout(() => {
          saving = cached.save(files).then(
            (saved) => logger.info(saved, 'parse results of tenant files stored'),
            (error: unknown) =>
              logger.warn({ err: error }, 'storing parse results of tenant files failed'),
          )
        }, SAVE_CACHE_AFTER_MS)
        saveTimer.unref()
        stopSaving = () => {
          clearTimeout(saveTimer)
          cached.stop()
        }
      }
      if (options.watch && !closed) {
        stopWatching = watchPath(
          options.path,
          (paths) =>
            void enqueue(paths === undefined ? { kind: 'scan' } : { kind: 'paths', paths }),
          logger,
        )
      }
    },
    loaded: () => isLoaded,
    reload: () => enqueue({ kind: 'all' }),
    async close() {
      closed = true
      stopWatching?.()
      // Before the issuer closes the store under it; what is not stored yet is left out.
      stopSaving?.()
      await saving
    },
  }
}

/**
 * A part of a reload built or refused as a whole: the tenants of one changed or removed file, or
 * one tenant rebuilt alone (a changed provider script, SIGHUP).
 */
interface Unit {
  /** The changed or removed files; empty for a tenant rebuilt alone. */
  files: string[]
  put: Tenant[]
  remove: string[]
}

const NO_TENANT_LEFT = 'no tenant would be left'

/**
 * Splits a reload's `put` and `remove` into units. The files between which a tenant moves are
 * one unit: taken apart, the tenant would end up served twice or by no file. Units with nothing
 * to build are left out (they cannot fail); the ones that add tenants come first, so that a
 * removal is tried after what replaces it.
 */
function unitsOf(
  accepted: readonly { name: string; file: ConfigFile }[],
  removed: readonly string[],
  put: ReadonlyMap<string, Tenant>,
  remove: readonly string[],
  lastGood: (file: string) => ConfigFile | undefined,
): Unit[] {
  const files = [...accepted.map((change) => change.name), ...removed]
  /** Tenant name to the file of its last good version, and to the file that has it now. */
  const from = new Map<string, string>()
  for (const name of files)
    for (const tenant of lastGood(name)?.tenants ?? []) from.set(tenant.name, name)
  const to = new Map<string, string>()
  for (const { name, file } of accepted)
    for (const tenant of file.tenants) to.set(tenant.name, name)

  const parent = new Map<string, string>()
  // A loop, not recursion: thousands of files may pass tenants along in one change.
  const root = (file: string): string => {
    let top = file
    for (let up = parent.get(top); up !== undefined; up = parent.get(top)) top = up
    for (let at = file; at !== top;) {
      const up = parent.get(at) ?? top
      parent.set(at, top)
      at = up
    }
    return top
  }
  for (const [tenant, file] of to) {
    const old = from.get(tenant)
    if (old === undefined) continue
    const [a, b] = [root(old), root(file)]
    if (a !== b) parent.set(a, b)
  }
  const byRoot = new Map<string, Unit>()
  const unitOf = (file: string): Unit => {
    const key = root(file)
    let unit = byRoot.get(key)
    if (unit === undefined) {
      unit = { files: [], put: [], remove: [] }
      byRoot.set(key, unit)
    }
    return unit
  }
  for (const name of files) unitOf(name).files.push(name)
  const alone: Unit[] = []
  for (const [name, tenant] of put) {
    const file = to.get(name)
    if (file === undefined) alone.push({ files: [], put: [tenant], remove: [] })
    else unitOf(file).put.push(tenant)
  }
  for (const name of remove) {
    const file = from.get(name)
    if (file === undefined) alone.push({ files: [], put: [], remove: [name] })
    else unitOf(file).remove.push(name)
  }
  const units = [...byRoot.values(), ...alone].filter(
    (unit) => unit.put.length > 0 || unit.remove.length > 0,
  )
  const removing = (unit: Unit): boolean => unit.remove.length > unit.put.length
  return [...units.filter((unit) => !removing(unit)), ...units.filter(removing)]
}

/** Whether the names an event burst gave can be trusted to say what changed. */
function needsScan(paths: ReadonlySet<string>): boolean {
  // A ConfigMap volume swaps `..data`, a symlink to a folder named for the time: every file
  // under it may have changed. An empty burst named nothing useful either.
  if (paths.size === 0) return true
  for (const path of paths) if (path.split(sep).some((part) => part.startsWith('.'))) return true
  return false
}

/** A digest of a file's content; empty when it cannot be read. */
function contentDigest(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('base64url')
  } catch {
    return ''
  }
}

function stampOf(found: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${found.ino}:${found.size}:${found.mtimeMs}:${found.ctimeMs}`
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
