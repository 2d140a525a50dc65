import { statSync, watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import type { Logger } from 'pino'

// Editors and `kubectl cp` write a file in several steps, and a ConfigMap volume swaps a symlink;
// one call after the burst is enough.
const DEBOUNCE_MS = 300

/**
 * Calls `onChange` once per burst of file-system events under `path` (a file, or a directory
 * watched recursively). A path that cannot be watched is logged and left alone: SIGHUP still
 * reloads. Answers a function that stops watching.
 */
export function watchPath(
  path: string,
  onChange: () => void,
  logger: Logger,
  what = 'configuration',
): () => void {
  let timer: NodeJS.Timeout | undefined
  let watcher: FSWatcher | undefined
  try {
    const recursive = statSync(path).isDirectory()
    watcher = watch(path, { recursive, persistent: false }, () => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        logger.info({ path }, `${what} changed on disk: reloading`)
        onChange()
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
