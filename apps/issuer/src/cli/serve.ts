import { randomBytes } from 'node:crypto'
import cluster from 'node:cluster'
import { parseSettings } from '@tessera/config-schema'
import type { Settings } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { WORKER_SLOT_VARIABLE } from '../cluster/ipc.js'
import { MAKE_KEY_ENCRYPTION_SECRET } from '../keys/key-encryption.js'
import { guardProcess } from '../providers/process-guard.js'
import { assertConfigExists } from './config-directory.js'
import { createConsoleLogger } from './console-logger.js'
import { servePrimary } from './serve-primary.js'
import { serveTenants } from './serve-tenants.js'

/**
 * `tessera start` / `tessera dev`: validate everything, then listen (`dev` listens on PORT first,
 * to build its issuer URLs with the real port, and serves nothing until all is valid). Problems
 * are printed one per line to stderr and the process exits 1 before any request is served.
 */
export async function serve(
  mode: 'dev' | 'start',
  flagSettings: Record<string, string>,
): Promise<void> {
  const vars: Record<string, string | undefined> = { ...process.env, ...flagSettings }
  let devSecretGenerated = false
  if (mode === 'dev' && !vars.JWT_SECRET) {
    vars.JWT_SECRET = randomBytes(32).toString('base64url')
    devSecretGenerated = true
  }
  const settings = parseSettings(vars, mode)
  assertConfigExists(settings, vars, mode, mode)
  // A worker of `--workers` (the primary forked this same command line) logs its slot on every
  // line; the primary has said everything else already.
  const slot = cluster.isWorker ? Number(process.env[WORKER_SLOT_VARIABLE]) : undefined
  // Coloured lines for dev on a terminal, JSON otherwise (start, or dev into a pipe or file).
  const base = await createConsoleLogger(settings.logLevel, mode)
  const logger = slot === undefined ? base : base.child({ worker: slot })
  // A provider script may leave a promise of its own rejected (a timer or a request it started and
  // dropped). Node's default would end the process, and every tenant with it, printing a reason
  // that may quote the password the script was given: log its kind and where it came from only.
  // Likewise for an exception thrown from its timers; and its process.exit is refused.
  guardProcess(logger)
  if (slot === undefined) {
    warnAboutSettings(settings, mode, devSecretGenerated, logger)
    if (mode === 'start' && settings.workers > 1) {
      await servePrimary(settings, vars, logger)
      return
    }
  }
  await serveTenants({ mode, settings, vars, logger, slot })
}

/** What `start` and `dev` warn about before anything is built (once, in a primary). */
function warnAboutSettings(
  settings: Settings,
  mode: 'dev' | 'start',
  devSecretGenerated: boolean,
  logger: Logger,
): void {
  if (devSecretGenerated) {
    // A short message, the rest in fields: on a terminal it reads as one line.
    logger.warn(
      {
        consequence: 'HS256 tokens verify nowhere else and stop working at restart',
        fix: 'set JWT_SECRET (32+ characters)',
      },
      'JWT_SECRET is not set: using a random secret for this process only',
    )
  }
  if (settings.keyEncryptionSecret === undefined) {
    // Names the variable only; whether set or not, no secret is ever logged. `start` refuses
    // every tenant that stores RS256 keys, RS256 or with OpenID Connect clients (the issuer
    // checks each configuration it is given); `dev` serves them.
    if (mode === 'start') {
      logger.info(
        'KEY_ENCRYPTION_SECRET is not set: RS256 tenants are refused, and so are HS256 tenants ' +
          'with OpenID Connect clients (their ID tokens are RS256), since their private keys ' +
          `would be stored in clear; make a secret with: ${MAKE_KEY_ENCRYPTION_SECRET}`,
      )
    } else {
      logger.warn(
        {
          consequence: 'anyone who can read the database can sign tokens for those tenants',
          start: 'refuses RS256 tenants, and HS256 tenants with OpenID Connect clients, without it',
        },
        'KEY_ENCRYPTION_SECRET is not set: RS256 private keys are stored UNENCRYPTED',
      )
    }
  }
  if (settings.adminToken !== undefined && settings.adminPort === 'off') {
    logger.warn('ADMIN_TOKEN is set but ADMIN_PORT=off: the admin API is not served anywhere')
  }
  if (settings.fetchAllowPrivateAddresses && mode === 'start') {
    logger.warn(
      'FETCH_ALLOW_PRIVATE_ADDRESSES is on: client ID metadata documents may lead the issuer into loopback and private networks; for development and tests only',
    )
  }
}
