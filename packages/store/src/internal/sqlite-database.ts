import Database from 'better-sqlite3'
import { StoreError } from '../errors.js'
import { migrate } from './migrations.js'

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
 */
export function openDatabase(file: string): Database.Database {
  let db: Database.Database | undefined
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    db.pragma('foreign_keys = ON')
    migrate(db)
    return db
  } catch (cause) {
    db?.close()
    throw new StoreError('ERR_STORE_OPEN', `cannot open the SQLite database ${file}`, { cause })
  }
}
