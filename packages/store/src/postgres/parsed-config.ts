import { parseParsedConfigRow } from '../internal/tables/parsed-config.js'
import type { ParsedConfigStore } from '../parsed-config.js'
import type { PgRunner } from './runner.js'

/**
 * Inserts the entries of $1 (keys) and $2 (values), stamped $3, in one statement, so in one
 * transaction and one round trip. The keys come sorted (see parsedConfigToAdd) and are inserted
 * in that order: two replicas adding the same keys at once then wait on each other's rows in
 * one order, and never deadlock. A key another transaction is writing is waited for, then
 * written again (the keys are deduplicated first: one statement may not update a row twice).
 */
const ADD_PARSED_CONFIG = `
  INSERT INTO parsed_config ("key", value, stored_at)
  SELECT k, v, $3::bigint FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS added(k, v, n)
  ORDER BY n
  ON CONFLICT ("key") DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at`

/** The parsed-config store over the PostgreSQL `parsed_config` table. */
export function createPostgresParsedConfig({ run }: PgRunner): ParsedConfigStore {
  return {
    list() {
      return run('parsedConfig.list', async (sql) => {
        const { rows } = await sql('SELECT "key", value FROM parsed_config', [])
        return rows.map(parseParsedConfigRow)
      })
    },
    add(entries, now) {
      return run('parsedConfig.add', async (sql) => {
        // checkedStore hands over the entries checked, each key once, in order.
        if (entries.length === 0) return 0
        const { rowCount } = await sql(ADD_PARSED_CONFIG, [
          entries.map(({ key }) => key),
          entries.map(({ value }) => value),
          now,
        ])
        return rowCount ?? 0
      })
    },
    prune(keep, before) {
      return run('parsedConfig.prune', async (sql) => {
        const { rowCount } = await sql(
          `DELETE FROM parsed_config WHERE stored_at < $1 AND "key" <> ALL($2::text[])`,
          [before, [...keep]],
        )
        return rowCount ?? 0
      })
    },
  }
}
