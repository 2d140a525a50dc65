import type Database from 'better-sqlite3'
import { StoreError } from '../errors.js'
import { settle } from '../internal/settle.js'
import { createCheckpointer } from '../internal/sqlite-database.js'
import type { Store } from '../store.js'
import { createSqliteFailureCounter } from './client-auth-failures.js'
import { createSqliteCodes } from './codes.js'
import { createSqliteConsents } from './consents.js'
import type { SqliteContext } from './context.js'
import { createSqliteExpiry } from './expiry.js'
import { createFamilyWrites } from './family-writes.js'
import { createGroupCommit } from './group-commit.js'
import { createSqliteKeys } from './keys.js'
import { createSqliteMarks } from './marks.js'
import { createSqliteParsedConfig } from './parsed-config.js'
import { createSqliteRefreshTokens } from './refresh-tokens.js'
import { createSqliteRegistrations } from './registrations.js'
import { createSqliteSecrets } from './secrets.js'
import { createSqliteSessions } from './sessions.js'
import { createSqliteTenantAlgorithms } from './tenant-algorithms.js'
import { createSqliteThrottlePort, sqliteThrottle } from './throttle.js'

/** Every port over one open, migrated SQLite connection to `file`. */
export function createSqliteStore(db: Database.Database, file: string): Store {
  const checkpointer = createCheckpointer(db, file)
  const context: SqliteContext = {
    db,
    use: () => {
      if (!db.open) throw new StoreError('ERR_STORE_CLOSED', 'the SQLite store is closed')
    },
    wrote: () => checkpointer.wrote(),
  }
  const groupCommit = createGroupCommit(context)
  const families = createFamilyWrites(db)
  const throttleWrites = sqliteThrottle(db)
  const clientAuthFailures = createSqliteFailureCounter(context)
  const select1 = db.prepare('SELECT 1')

  return {
    keys: createSqliteKeys(context),
    throttle: createSqliteThrottlePort(throttleWrites, groupCommit),
    clientAuthFailures,
    codes: createSqliteCodes(context, families),
    refreshTokens: createSqliteRefreshTokens(context, families, groupCommit),
    marks: createSqliteMarks(context),
    secrets: createSqliteSecrets(context),
    sessions: createSqliteSessions(context),
    clientRegistrations: createSqliteRegistrations(context),
    consents: createSqliteConsents(context),
    expiry: createSqliteExpiry(context, throttleWrites, clientAuthFailures),
    parsedConfig: createSqliteParsedConfig(context),
    algorithms: createSqliteTenantAlgorithms(context),
    ping() {
      return settle(() => {
        context.use()
        select1.get()
      })
    },
    async close() {
      // Writes already asked for are answered, not dropped.
      if (db.open) groupCommit.flush()
      // The checkpointer's connection first: the last connection to close checkpoints the WAL
      // and removes it.
      await checkpointer.close()
      if (db.open) db.close()
    },
  }
}
