/**
 * The checkpointer thread of an SQLite store (see `createCheckpointer`): its own connection to
 * the file, running PASSIVE checkpoints, which never wait for a lock and never block a writer,
 * every `intervalMs` until the store asks it to stop.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

/** What the store hands the thread. */
export interface CheckpointerData {
  /** The database file (never `:memory:`). */
  file: string
  intervalMs: number
}

const port = parentPort
if (port === null) throw new Error('the checkpointer runs in a worker thread')
const { file, intervalMs } = workerData as CheckpointerData
const db = new Database(file, { fileMustExist: true })
db.pragma('busy_timeout = 0')
db.pragma('synchronous = NORMAL')
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const timer = setInterval(() => {
  try {
    checkpoint.get()
  } catch {
    // Busy or interrupted: the next round, or the committing connection, will do it.
  }
}, intervalMs)
port.once('message', () => {
  clearInterval(timer)
  db.close()
  port.close()
})
port.postMessage('ready')
