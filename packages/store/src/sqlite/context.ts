import Database from 'better-sqlite3'
import { conflictError } from '../internal/checks.js'

/** What each port of the SQLite store shares: its connection and its lifecycle. */
export interface SqliteContext {
  readonly db: Database.Database
  /** Throws `ERR_STORE_CLOSED` once the store is closed. */
  readonly use: () => void
  /** Counts a committed write transaction, for the checkpointer. */
  readonly wrote: () => void
}

/** `?, ?, ?`: one anonymous parameter per column. */
export function placeholders(columns: readonly string[]): string {
  return columns.map(() => '?').join(', ')
}

/** Runs an INSERT; a taken primary key becomes ERR_STORE_CONFLICT, anything else is rethrown. */
export function insertOnce(what: string, insert: () => unknown): void {
  try {
    insert()
  } catch (cause) {
    if (cause instanceof Database.SqliteError && cause.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw conflictError(what, cause)
    }
    throw cause
  }
}
