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
import {
  cachedFileExists,
  findConfigFiles,
  loadConfigFiles,
  readConfigFile,
} from '@tessera/config-schema'
import type { ConfigIndex, ConfigIssue, ParseConfigOptions, Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import type { ParseCacheSession } from '../startup/parse-cache.js'
import { collectGarbage } from '../startup/start-garbage.js'
import { applyFileChanges } from './files/reload.js'
import type { ChangedFile, Entry, FileChanges, ReloadState } from './files/reload.js'
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
  let index: ConfigIndex | undefined
  const disk: Disk = {
    path: options.path,
    directory: false,
    entries: new Map(),
    served: new Map(),
    scripts: new Map(),
  }
  const state: ReloadState = {
    entries: disk.entries,
    served: disk.served,
    logger,
    shown: (file) => shown(options.path, file),
  }

  let reloading: Promise<boolean> = Promise.resolve(true)
  const enqueue = (scope: Scope): Promise<boolean> => {
    // One reload at a time: a burst of file events must not interleave two builds.
    reloading = reloading.then(async () => {
      if (target === undefined || index === undefined || closed) return false
      try {
        const changes = await readChanges(disk, scope, {
          env: options.env,
          jwtSecret: options.jwtSecret,
          shortClientSecrets: options.shortClientSecrets,
          // One reload looks each provider script up once, however many tenants name it.
          fileExists: cachedFileExists(),
        })
        return await applyFileChanges(state, target, index, changes)
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

  let stopSaving: (() => Promise<void>) | undefined

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
      const cached = await openCache(options)
      const loaded = await loadConfigFiles(options.path, {
        env: options.env,
        jwtSecret: options.jwtSecret,
        shortClientSecrets: options.shortClientSecrets,
        ...(cached === undefined ? {} : { parseCache: cached.cache }),
      })
      // The load's garbage goes before the tenants are built (see start-garbage.ts).
      if (loaded.tenants.length >= COLLECT_AFTER_TENANTS) collectGarbage()
      await to.replaceAll(loaded.tenants)
      disk.directory = loaded.directory
      index = loaded.index
      for (const file of loaded.files) {
        disk.entries.set(file.file, { stamp: stamps.get(file.file) ?? '', served: file })
      }
      for (const tenant of loaded.tenants) disk.served.set(tenant.name, tenant)
      changedScripts(disk)
      isLoaded = true
      if (cached !== undefined) {
        logger.info({ ...cached.counts }, 'tenant files read; parse results from the database')
      }
      if (cached !== undefined && options.storeParseResults !== false) {
        // The files that missed are parsed again and stored once the issuer listens.
        const files = loaded.files.map((file) => file.file)
        stopSaving = saveLater(cached, files, logger)
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
      await stopSaving?.()
    },
  }
}

/** What change detection looks at and keeps: the files read, their stamps, the scripts seen. */
interface Disk {
  /** TESSERA_CONFIG. */
  path: string
  /** Whether `path` is a directory searched recursively (or one YAML file). */
  directory: boolean
  /** By file name as shown in issues (`path` joined with the file's path inside it). */
  entries: Map<string, Entry>
  /** The tenants served, by name. */
  served: Map<string, Tenant>
  /** The provider scripts of the tenants served, as last seen. */
  scripts: Map<string, { stamp: string; digest: string }>
}

/**
 * Reads what changed for `scope`: the files whose stamp changed (every file on SIGHUP), the
 * files gone, and the other files that changed (provider scripts).
 */
async function readChanges(
  disk: Disk,
  scope: Scope,
  parse: ParseConfigOptions,
): Promise<FileChanges> {
  const { files, other } = await candidates(disk, scope)
  const changed: ChangedFile[] = []
  const removed: string[] = []
  let read = 0
  for (const name of [...files].sort(byCodeUnit)) {
    const found = statSync(name, { throwIfNoEntry: false })
    const entry = disk.entries.get(name)
    if (found === undefined || !found.isFile()) {
      if (entry !== undefined) removed.push(name)
      continue
    }
    const stamp = stampOf(found)
    if (scope.kind !== 'all' && entry?.stamp === stamp) continue
    changed.push({ name, stamp, file: readConfigFile(name, parse) })
    if (++read % FILES_PER_TURN === 0) await yieldToRequests()
  }
  return { changed, removed, other, all: scope.kind === 'all' }
}

/** The files to look at for `scope`, and the names under `path` that are not YAML files. */
async function candidates(
  disk: Disk,
  scope: Scope,
): Promise<{ files: Set<string>; other: string[] }> {
  const files = new Set<string>()
  const other: string[] = []
  if (!disk.directory) {
    files.add(disk.path)
    return { files, other }
  }
  if (scope.kind === 'paths' && !needsScan(scope.paths)) {
    for (const name of scope.paths) {
      const full = join(disk.path, name)
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
        for (const known of disk.entries.keys()) if (known.startsWith(prefix)) files.add(known)
      }
    }
    // Keeps the scripts' stamps current, so that a later scan does not find them changed again.
    if (other.length > 0) changedScripts(disk)
    return { files, other }
  }
  for (const file of await findConfigFiles(disk.path)) files.add(file)
  for (const known of disk.entries.keys()) files.add(known)
  // Without names to go by, a provider script is known to have changed by its stamp.
  return { files, other: changedScripts(disk) }
}

/**
 * The provider scripts of the tenants served that changed since last looked at: by stamp, then
 * by content, as a ConfigMap update makes every file anew whether it changed or not.
 */
function changedScripts(disk: Disk): string[] {
  const names = new Set<string>()
  for (const tenant of disk.served.values())
    for (const script of tenant.providers) names.add(script)
  const changed: string[] = []
  for (const script of names) {
    const found = statSync(script, { throwIfNoEntry: false })
    const stamp = found === undefined ? '' : stampOf(found)
    const seen = disk.scripts.get(script)
    if (seen?.stamp === stamp) continue
    const digest = contentDigest(script)
    if (seen !== undefined && seen.digest !== digest) changed.push(script)
    disk.scripts.set(script, { stamp, digest })
  }
  return changed
}

/** The parse cache's session, or undefined when there is none or it cannot be read. */
async function openCache(options: FilesSourceOptions): Promise<ParseCacheSession | undefined> {
  if (options.parseCache === undefined) return undefined
  try {
    return await options.parseCache()
  } catch (error) {
    options.logger.warn(
      { err: error },
      'parse results of tenant files could not be read; parsing every file',
    )
    return undefined
  }
}

/**
 * Stores the parse results of `files` that the first load missed, a moment after it. Answers a
 * function that stops: what is not stored by then is left out.
 */
function saveLater(
  cached: ParseCacheSession,
  files: readonly string[],
  logger: Logger,
): () => Promise<void> {
  let saving: Promise<void> | undefined
  const saveTimer = setTimeout(() => {
    saving = cached.save(files).then(
      (saved) => logger.info(saved, 'parse results of tenant files stored'),
      (error: unknown) =>
        logger.warn({ err: error }, 'storing parse results of tenant files failed'),
    )
  }, SAVE_CACHE_AFTER_MS)
  saveTimer.unref()
  return async () => {
    clearTimeout(saveTimer)
    cached.stop()
    await saving
  }
}

/** A file as the log shows it: relative to `path` when under it. */
function shown(path: string, file: string): string {
  const inside = relative(path, file)
  return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? file : inside
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
