import type { SecretStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import { parseSecretRow } from '../internal/tables/secrets.js'
import type { SqliteContext } from './context.js'

/** The secret store over the SQLite `secrets` table. */
export function createSqliteSecrets({ db, use }: SqliteContext): SecretStore {
  const selectSecret = db.prepare<[string]>('SELECT value FROM secrets WHERE name = ?')
  const insertSecret = db.prepare<[string, string]>(
    'INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
  )
  return {
    getOrCreateSecret(name, candidate) {
      return settle(() => {
        use()
        const stored = selectSecret.get(name)
        if (stored !== undefined) return parseSecretRow(stored)
        // Another process may insert first: then this does nothing, and the read gets its value.
        insertSecret.run(name, candidate)
        return parseSecretRow(selectSecret.get(name))
      })
    },
  }
}
