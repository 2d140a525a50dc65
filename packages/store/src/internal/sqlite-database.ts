import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { StoreError } from '../errors.js'
import { migrate } from './migrations.js'
import type { CheckpointerData } from './sqlite-checkpointer.js'
import { workerUrl } from './worker-url.js'

/** Page cache per connection, in KiB when negative (SQLite's convention): 2 MB. */
const CACHE_SIZE = -2000

/**
 * Opens an SQLite file with the settings every connection needs, then migrates it.
 *
 * - WAL lets readers proceed while one writer writes, which is what several issuer processes
 *   sharing one file need; it is a property of the file and persists.
 * - synchronous = NORMAL is the setting WAL is designed for: a commit is durable across a crash
 *   of the process, and only a power loss can undo the last commits (FULL would fsync on every
 *   commit, costing most of the token endpoint's throughput).
 * - busy_timeout makes a writer wait up to 5 s for another connection's lock instead of failing
 *   at once with SQLITE_BUSY. It and foreign_keys are per connection, so they are set each time.
 * - cache_size is SQLite's own default (better-sqlite3 builds it with 16 MB): start-up reads every
 *   tenant's keys once (with 10,000 tenants, 20 MB of pages the process would then keep), and the
 *   operating system's page cache serves later reads of the file.
 */
export function openDatabase(file: string): Database.Database {
  let db: Database.Database | undefined
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    db.pragma('foreign_keys = ON')
    db.pragma(`cache_size = ${CACHE_SIZE}`)
    migrate(db)
    return db
  } catch (cause) {
    db?.close()
    throw new StoreError('ERR_STORE_OPEN', `cannot open the SQLite database ${file}`, { cause })
  }
}

/**
 * Pages the WAL may reach before the connection that commits checkpoints it itself: SQLite's
 * default.
 */
const AUTOCHECKPOINT_PAGES = 1000
/**
 * The same, while a checkpointer thread keeps the WAL short: only a safety net, should that
 * thread fall behind. The WAL restarts from its beginning only when it was wholly copied back
 * when a write begins, which under constant writing mostly happens here (about 40 MB of 4 KiB
 * pages).
 */
const AUTOCHECKPOINT_PAGES_WITH_CHECKPOINTER = 10_000
/** Write transactions a store commits before it starts its checkpointer thread. */
const WRITES_BEFORE_CHECKPOINTER = 256
/** How often the checkpointer copies the WAL back into the database file. */
const CHECKPOINT_INTERVAL_MS = 50

/** The module the checkpointer thread runs. */
const CHECKPOINTER = workerUrl('./sqlite-checkpointer.js', import.meta.url)

/** Moves the WAL checkpoints of one SQLite file off the thread that commits. */
export interface Checkpointer {
  /** Counts a committed write transaction; the thread starts after the first few hundred. */
  wrote(): void
  /** Stops the thread, if it runs; the committing connection then checkpoints by its own threshold. */
  close(): Promise<void>
}

/**
 * A checkpointer for the WAL of `db`, the connection that commits.
 *
 * With synchronous = NORMAL a commit only writes to the WAL; the fsyncs happen at checkpoints,
 * which by default the committing connection runs itself every 1000 pages, blocking the event
 * loop for the copy and two fsyncs (measured: a third of the time of a refresh-token rotation).
 * Here a worker thread with its own connection runs PASSIVE checkpoints every 50 ms instead,
 * and the committing connection's own threshold becomes a safety net. Durability is SQLite's:
 * a commit is durable once in the WAL, and a checkpoint syncs as SQLite's own does; only the
 * thread that waits for them differs. The thread starts once the store has committed
 * a few hundred write transactions, so short-lived uses (the CLI, tests) never start one; if it
 * cannot start or stops, the committing connection checkpoints by its own threshold.
 *
 * For `:memory:` (no WAL) the checkpointer does nothing.
 */
export function createCheckpointer(db: Database.Database, file: string): Checkpointer {
  let writes = 0
  let worker: Worker | undefined
  // One attempt per store: a thread that cannot start or dies is not restarted.
  let started = file === ':memory:'
  let closed = false
  const fallBack = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
  }
  const start = (): void => {
    started = true
    try {
      const workerData: CheckpointerData = { file, intervalMs: CHECKPOINT_INTERVAL_MS }
      worker = new Worker(CHECKPOINTER, { workerData })
    } catch {
      return
    }
    // Never what keeps the process alive.
    worker.unref()
    worker.once('message', () => {
      if (!closed && db.open) {
        db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES_WITH_CHECKPOINTER}`)
      }
    })
    worker.once('error', () => undefined)
    worker.once('exit', () => {
      worker = undefined
      fallBack()
    })
  }
  return {
    wrote() {
      if (started || closed || ++writes < WRITES_BEFORE_CHECKPOINTER) return
      start()
    },
    async close() {
      closed = true
      const running = worker
      if (running === undefined) return
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()))
      // Referenced again while it stops, so that the process waits for the close to finish.
      running.ref()
      running.postMessage('stop')
      await exited
    },
  }
}
