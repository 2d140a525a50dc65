import { describe } from 'vitest'
import { clientAuthFailuresContract } from './client-auth-failures.js'
import { codeBoundContract } from './code-bound.js'
import { codesContract } from './codes.js'
import { consentsContract } from './consents.js'
import { dynamicReplicasContract } from './dynamic-replicas.js'
import type { OpenStore } from './fixtures.js'
import { grantRecordsContract } from './grant-records.js'
import { resourcesContract } from './resources.js'
import { keysContract } from './keys.js'
import { lifecycleContract } from './lifecycle.js'
import { marksContract } from './marks.js'
import { parsedConfigContract } from './parsed-config.js'
import { processesContract } from './processes.js'
import { publishAheadContract } from './publish-ahead.js'
import { purgeContract } from './purge.js'
import { refreshTokensContract } from './refresh-tokens.js'
import { registrationsContract } from './registrations.js'
import { secretsContract } from './secrets.js'
import { sessionsContract } from './sessions.js'
import type { SharedDatabase } from './shared-database.js'
import { storesContract } from './stores.js'
import { throttleContract } from './throttle.js'

export { attemptsHeld, clearOne, failOne, failuresOf, releaseOne, reserveOne } from './attempts.js'
export {
  codeRecord,
  consentRecord,
  day,
  hour,
  minute,
  refreshFamily,
  registeredClient,
  sessionRecord,
  sha256,
  startFamily,
  storedKey,
  storeError,
  t0,
} from './fixtures.js'
export type { OpenStore } from './fixtures.js'
export { raceLogoutAndRedemption, recordConcurrently } from './races.js'
export type { SharedDatabase } from './shared-database.js'

/** One suite per port; each opens a fresh store with the factory before each of its tests. */
const SUITES: readonly ((open: OpenStore) => void)[] = [
  publishAheadContract,
  keysContract,
  throttleContract,
  clientAuthFailuresContract,
  codeBoundContract,
  codesContract,
  refreshTokensContract,
  grantRecordsContract,
  resourcesContract,
  sessionsContract,
  registrationsContract,
  consentsContract,
  purgeContract,
  marksContract,
  secretsContract,
  parsedConfigContract,
  lifecycleContract,
]

/**
 * The behaviour every Store adapter owes the ports of @tessera/keys and @tessera/grants. Each
 * adapter's test file calls this with a factory that opens a fresh, empty store.
 */
export function runStoreContract(name: string, open: OpenStore): void {
  describe(`${name} store: contract`, () => {
    for (const suite of SUITES) suite(open)
  })
}

/**
 * The behaviour replicas of an adapter that shares one database owe each other: several stores
 * of one process, and separate processes, racing on the same rows.
 */
export function runReplicaContract(name: string, database: SharedDatabase): void {
  describe(`${name} store: replicas`, () => {
    storesContract(database)
    dynamicReplicasContract(database)
    processesContract(database)
  })
}
