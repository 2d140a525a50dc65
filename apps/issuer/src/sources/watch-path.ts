import { statSync, watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import type { Logger } from 'pino'

// Editors and `kubectl cp` write a file in several steps, and a ConfigMap volume swaps a symlink;
// one call after the burst is enough.
const DEBOUNCE_MS = 300

/**
 * Calls `onChange` once per burst of file-system events under `path` (a file, or a directory
 * watched recursively), with the paths the events named, relative to `path`; `undefined` when an
 * event named none, so that everything may have changed. A path that cannot be watched is logged
 * and left alone: SIGHUP still reloads. Answers a function that stops watching.
 */
export function watchPath(
  path: string,
  onChange: (changed: ReadonlySet<string> | undefined) => void,
  logger: Logger,
  what = 'configuration',
): () => void {
  let timer: NodeJS.Timeout | undefined
  let watcher: FSWatcher | undefined
  let changed: Set<string> | undefined = new Set()
  try {
    const recursive = statSync(path).isDirectory()
    watcher = watch(path, { recursive, persistent: false }, (_event, filename) => {
      if (filename === null) changed = undefined
      else changed?.add(filename)
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
    })
    watcher.on('error', (error) => {
      logger.warn({ err: error }, `watching the ${what} failed; SIGHUP still reloads`)
    })
  } catch (error) {
    logger.warn({ err: error }, `cannot watch the ${what}; SIGHUP still reloads`)
  }
  return () => {
    clearTimeout(timer)
    watcher?.close()
  }
}
