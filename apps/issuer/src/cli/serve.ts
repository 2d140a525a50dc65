import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import { parseSettings } from '@tessera/config-schema'
import { collectDefaultMetrics } from 'prom-client'
import { createIssuer } from '../issuer.js'
import { MAKE_KEY_ENCRYPTION_SECRET } from '../key-encryption.js'
import { createLogger } from '../logger.js'
import { createMetrics } from '../metrics.js'

const SHUTDOWN_GRACE_MS = 10_000

/**
 * `tessera start` / `tessera dev`: validate everything, then listen. Problems are printed one
 * per line to stderr and the process exits 1 before it listens.
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
  const logger = createLogger(settings.logLevel)
  if (devSecretGenerated) {
    logger.warn(
      'JWT_SECRET is not set: using a random secret for this process only. HS256 tokens will ' +
        'not verify anywhere else and stop working at restart. Set JWT_SECRET (32+ characters).',
    )
  }
  if (settings.keyEncryptionSecret === undefined) {
    // Names the variable only; whether set or not, no secret is ever logged. `start` refuses
    // every RS256 tenant (the issuer checks each configuration it is given); `dev` serves them.
    if (mode === 'start') {
      logger.info(
        'KEY_ENCRYPTION_SECRET is not set: RS256 tenants are refused, since their private keys ' +
          `would be stored in clear; make a secret with: ${MAKE_KEY_ENCRYPTION_SECRET}`,
      )
    } else {
      logger.warn(
        'KEY_ENCRYPTION_SECRET is not set: RS256 private keys are stored UNENCRYPTED in the ' +
          'database, which only tessera dev allows (tessera start refuses RS256 tenants ' +
          'without it); anyone who can read the database can sign tokens for those tenants',
      )
    }
  }
  const metrics = createMetrics()
  collectDefaultMetrics({ register: metrics.registry })
  // watch: reload on changes under TESSERA_CONFIG (files), re-import provider scripts when their
  // directory changes (kubernetes).
  const issuer = await createIssuer({ settings, mode, logger, env: vars, metrics, watch: true })

  const server: Server = issuer.app.listen(settings.port, settings.host)
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : settings.port
  logger.info(
    {
      url: `http://${settings.host}:${port}`,
      tenants: issuer.registry.all().map((t) => ({
        name: t.tenant.name,
        issuer: t.issuer,
        alg: t.tenant.jwtAlgorithm,
        kid: t.keyRing.activeKid(),
      })),
      database: settings.databaseUrl.split(':', 1)[0],
      source:
        settings.configSource === 'kubernetes'
          ? `kubernetes:${settings.kubernetesNamespace}`
          : settings.config,
      ready: issuer.ready(),
    },
    'tessera issuer listening',
  )

  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: finishing requests in flight')
    // Stop accepting, let requests in flight finish, then drop idle keep-alive sockets.
    server.close(() => {
      void issuer.close().then(() => {
        logger.info('stopped')
        process.exit(0)
      })
    })
    server.closeIdleConnections()
    setTimeout(() => {
      logger.warn('shutdown grace over: closing remaining connections')
      server.closeAllConnections()
    }, SHUTDOWN_GRACE_MS).unref()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))

  // Configuration reload without a restart: SIGHUP (the sources also follow changes themselves).
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading the configuration')
    void issuer.reload()
  })
}
