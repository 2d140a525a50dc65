import type { SecretStore } from '@tessera/grants'
import { parseSecretRow } from '../internal/tables/secrets.js'
import type { PgRunner } from './runner.js'

/** The secret store over the PostgreSQL `secrets` table, one value per name for every replica. */
export function createPostgresSecrets({ run }: PgRunner): SecretStore {
  return {
    getOrCreateSecret(name, candidate) {
      return run('getOrCreateSecret', async (sql) => {
        const inserted = await sql(
          `INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING
           RETURNING value`,
          [name, candidate],
        )
        if (inserted.rows.length === 1) return parseSecretRow(inserted.rows[0])
        // A separate statement: its snapshot, unlike the INSERT's, includes the row of the
        // replica that won (the INSERT waited for it to commit, then did nothing).
        const { rows } = await sql('SELECT value FROM secrets WHERE name = $1', [name])
        return parseSecretRow(rows[0])
      })
    },
  }
}
