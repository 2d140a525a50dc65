import { readdirSync, realpathSync, statSync, watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import { basename, join, sep } from 'node:path'
import type { Logger } from 'pino'

// Editors and `kubectl cp` write a file in several steps, and a ConfigMap volume swaps a symlink;
// one call after the burst is enough.
const DEBOUNCE_MS = 300

/**
 * Calls `onChange` once per burst of file-system events under `path` (a file, or a directory
 * watched with its sub-folders), with the paths the events named, relative to `path`;
 * `undefined` when an event named none, so that everything may have changed. A path that cannot
 * be watched is logged and left alone: SIGHUP still reloads. Answers a function that stops
 * watching.
 */
export function watchPath(
  path: string,
  onChange: (changed: ReadonlySet<string> | undefined) => void,
  logger: Logger,
  what = 'configuration',
): () => void {
  let timer: NodeJS.Timeout | undefined
  let changed: Set<string> | undefined = new Set()
  const onEvent = (name: string | null): void => {
    if (name === null) changed = undefined
    else changed?.add(name)
    clearTimeout(timer)
    timer = setTimeout(() => {
      const burst = changed
      changed = new Set()
      logger.info(
        { path, ...(burst === undefined ? {} : { files: burst.size }) },
        `${what} changed on disk: reloading`,
      )
      onChange(burst)
    }, DEBOUNCE_MS)
    timer.unref()
  }
  const onError = (error: unknown): void => {
    logger.warn({ err: error }, `watching the ${what} failed; SIGHUP still reloads`)
  }
  let stop: () => void = () => undefined
  try {
    if (statSync(path).isDirectory()) {
      stop = watchFolders(path, onEvent, onError)
    } else {
      const watcher = watch(path, { persistent: false }, () => onEvent(null))
      watcher.on('error', onError)
      stop = () => watcher.close()
    }
  } catch (error) {
    logger.warn({ err: error }, `cannot watch the ${what}; SIGHUP still reloads`)
  }
  return () => {
    clearTimeout(timer)
    stop()
  }
}

/**
 * Watches `root` and every folder under it, one watcher per folder: a folder's watcher reports
 * its files' changes by name. Node 20's recursive watch on Linux keeps a watcher and the stats of
 * every file, which for ten thousand tenant files costs more memory and start-up time than the
 * files themselves. Folders that appear are watched too, and those that go are let go.
 */
function watchFolders(
  root: string,
  onEvent: (name: string | null) => void,
  onError: (error: unknown) => void,
): () => void {
  const watchers = new Map<string, FSWatcher>()
  // Real folders watched, so that a symbolic link to a folder already watched is not followed.
  const real = new Map<string, string>()

  const unwatch = (folder: string): void => {
    for (const [watched, watcher] of watchers) {
      if (watched === folder || watched.startsWith(folder + sep)) {
        watcher.close()
        watchers.delete(watched)
        real.delete(watched)
      }
    }
  }
  const add = (folder: string): void => {
    // The configuration search skips `node_modules`: nothing in one can change a tenant.
    if (watchers.has(folder) || basename(folder) === 'node_modules') return
    const absolute = join(root, folder)
    let resolved: string
    try {
      resolved = realpathSync(absolute)
    } catch {
      return
    }
    if ([...real.values()].includes(resolved)) return
    let watcher: FSWatcher
    try {
      watcher = watch(absolute, { persistent: false }, (_event, filename) => {
        if (filename === null) {
          onEvent(null)
          return
        }
        const name = folder === '' ? filename : join(folder, filename)
        onEvent(name)
        // A folder that appears is watched too; one that went is let go.
        const found = statSync(join(root, name), { throwIfNoEntry: false })
        if (found?.isDirectory() === true) add(name)
        else if (found === undefined && watchers.has(name)) unwatch(name)
      })
    } catch (error) {
      if (folder === '') throw error
      return
    }
    watcher.on('error', (error) => {
      // A sub-folder removed ends its watcher; only the root's failure is worth saying.
      if (folder === '') onError(error)
      else unwatch(folder)
    })
    watchers.set(folder, watcher)
    real.set(folder, resolved)
    let entries
    try {
      entries = readdirSync(absolute, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const name = folder === '' ? entry.name : join(folder, entry.name)
      const isFolder =
        entry.isDirectory() ||
        (entry.isSymbolicLink() &&
          statSync(join(root, name), { throwIfNoEntry: false })?.isDirectory() === true)
      if (isFolder) add(name)
    }
  }
  add('')
  return () => {
    for (const watcher of watchers.values()) watcher.close()
    watchers.clear()
  }
}
