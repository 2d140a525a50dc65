import type { Pool } from 'pg'
import type { Store } from '../store.js'
import { createPostgresFailureCounter } from './client-auth-failures.js'
import { createPostgresCodes } from './codes.js'
import { createPostgresConsents } from './consents.js'
import type { PgTarget } from './database.js'
import { createPostgresExpiry } from './expiry.js'
import { createPostgresKeys } from './keys.js'
import { createPostgresMarks } from './marks.js'
import { createPostgresParsedConfig } from './parsed-config.js'
import { createPostgresRefreshTokens } from './refresh-tokens.js'
import { createPostgresRegistrations } from './registrations.js'
import { createPgPool } from './runner.js'
import { createPostgresSecrets } from './secrets.js'
import { createPostgresSessions } from './sessions.js'
import { createPostgresTenantAlgorithms } from './tenant-algorithms.js'
import { createPostgresThrottle } from './throttle.js'

/** Every port over one pool of a migrated PostgreSQL database. */
export function createPostgresStore(pool: Pool, target: PgTarget): Store {
  const runner = createPgPool(pool, target)
  return {
    keys: createPostgresKeys(runner),
    throttle: createPostgresThrottle(runner),
    clientAuthFailures: createPostgresFailureCounter(runner),
    codes: createPostgresCodes(runner),
    refreshTokens: createPostgresRefreshTokens(runner),
    marks: createPostgresMarks(runner),
    secrets: createPostgresSecrets(runner),
    sessions: createPostgresSessions(runner),
    clientRegistrations: createPostgresRegistrations(runner),
    consents: createPostgresConsents(runner),
    expiry: createPostgresExpiry(runner),
    parsedConfig: createPostgresParsedConfig(runner),
    algorithms: createPostgresTenantAlgorithms(runner),
    ping() {
      return runner.run('ping', async (sql) => {
        await sql('SELECT 1')
      })
    },
    close: () => runner.end(),
  }
}
