import { settle } from '../internal/settle.js'
import { parseParsedConfigRow } from '../internal/tables/parsed-config.js'
import type { ParsedConfigStore } from '../parsed-config.js'
import type { SqliteContext } from './context.js'

/** The parsed-config store over the SQLite `parsed_config` table. */
export function createSqliteParsedConfig({ db, use, wrote }: SqliteContext): ParsedConfigStore {
  const listParsedConfig = db.prepare<[]>('SELECT "key", value FROM parsed_config')
  const insertParsedConfig = db.prepare<[string, string, number]>(
    `INSERT INTO parsed_config ("key", value, stored_at) VALUES (?, ?, ?)
     ON CONFLICT ("key") DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at`,
  )
  // The keys to keep as one JSON array parameter: a NOT IN list of tens of thousands of
  // parameters would pass SQLite's limit on variables.
  const pruneParsedConfig = db.prepare<[number, string]>(
    `DELETE FROM parsed_config
     WHERE stored_at < ? AND "key" NOT IN (SELECT value FROM json_each(?))`,
  )
  const addParsedConfig = db.transaction(
    (entries: readonly { key: string; value: string }[], now: number): number => {
      let inserted = 0
      for (const { key, value } of entries) {
        inserted += insertParsedConfig.run(key, value, now).changes
      }
      return inserted
    },
  )

  return {
    list() {
      return settle(() => {
        use()
        return listParsedConfig.all().map(parseParsedConfigRow)
      })
    },
    add(entries, now) {
      return settle(() => {
        use()
        // checkedStore hands over the entries checked, each key once, in order.
        if (entries.length === 0) return 0
        // IMMEDIATE, like the other write transactions: the write lock is waited for at BEGIN.
        const inserted = addParsedConfig.immediate(entries, now)
        wrote()
        return inserted
      })
    },
    prune(keep, before) {
      return settle(() => {
        use()
        const { changes } = pruneParsedConfig.run(before, JSON.stringify([...keep]))
        wrote()
        return changes
      })
    },
  }
}
