import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import { parseSettings } from '@tessera/config-schema'
import { collectDefaultMetrics } from 'prom-client'
import { createIssuer } from '../issuer.js'
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
  const metrics = createMetrics()
  collectDefaultMetrics({ register: metrics.registry })
  const issuer = await createIssuer({ settings, mode, logger, env: vars, metrics })

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
}
