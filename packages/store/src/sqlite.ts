import { chmod, mkdir, open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { StoreError } from './errors.js'
import { checkedStore } from './internal/checked-store.js'
import { openDatabase } from './internal/sqlite-database.js'
import { createSqliteStore } from './sqlite/store.js'
import type { Store } from './store.js'

const IN_MEMORY = ':memory:'

/**
 * Opens (creating if needed) an SQLite store: the embedded default, safe to share between
 * processes on one host. WAL mode, a 5 s busy timeout, and the schema migrated on open.
 *
 * @param path - a file path, relative to the working directory, whose directory is created if
 *   missing; or `:memory:` for a private in-memory database
 * @throws StoreError `ERR_STORE_OPEN` when the file cannot be created, opened or migrated
 * @example
 * ```ts
 * const store = await openSqliteStore('./data/tessera.db')
 * ```
 */
export async function openSqliteStore(path: string): Promise<Store> {
  if (typeof path !== 'string') throw new TypeError('openSqliteStore: path must be a string')
  if (path === '') {
    throw new StoreError(
      'ERR_STORE_URL',
      'sqlite: needs a file path, as in sqlite:./data/tessera.db',
    )
  }
  const file = path === IN_MEMORY ? path : resolve(path)
  if (file !== IN_MEMORY) {
    try {
      await createPrivateDirectory(dirname(file))
    } catch (cause) {
      throw new StoreError('ERR_STORE_OPEN', `cannot create the directory of ${file}`, { cause })
    }
    try {
      await createPrivateFile(file)
    } catch (cause) {
      throw new StoreError('ERR_STORE_OPEN', `cannot create the SQLite database ${file}`, { cause })
    }
  }
  return checkedStore(createSqliteStore(openDatabase(file), file))
}

/**
 * Creates `dir` and its missing parents as 0700. The mode is set with chmod, not only asked of
 * mkdir, because mkdir's is filtered through the umask; directories that exist are left alone.
 */
async function createPrivateDirectory(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: 0o700 })
  if (first === undefined) return
  for (let created = dir; ; created = dirname(created)) {
    await chmod(created, 0o700)
    if (created === first || dirname(created) === created) return
  }
}

/**
 * Creates the database file as 0600 when it does not exist yet, so that SQLite opens a file no
 * other user can read: it would create it 0644 less the umask (world-readable under umask 000),
 * and it gives the -wal and -shm files it creates next to it the mode of the database file.
 * An existing file keeps its mode. O_EXCL: of two processes creating it at once, one does.
 */
async function createPrivateFile(file: string): Promise<void> {
  let handle: FileHandle
  try {
    handle = await open(file, 'wx', 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
    throw error
  }
  try {
    await handle.chmod(0o600)
  } finally {
    await handle.close()
  }
}
