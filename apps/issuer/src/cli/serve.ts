import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import { parseSettings } from '@tessera/config-schema'
import { collectDefaultMetrics } from 'prom-client'
import type Koa from 'koa'
import { createIssuer } from '../issuer.js'
import type { Issuer } from '../issuer.js'
import { MAKE_KEY_ENCRYPTION_SECRET } from '../key-encryption.js'
import { createLogger } from '../logger.js'
import { createMetrics } from '../metrics.js'
import { assertConfigExists } from './config-directory.js'
import { createHttpServer, listen } from './listen.js'

const SHUTDOWN_GRACE_MS = 10_000

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
  const logger = createLogger(settings.logLevel)
  // A provider script may leave a promise of its own rejected (a timer or a request it started and
  // dropped). Node's default would end the process, and every tenant with it, printing a reason
  // that may quote the password the script was given: log its kind and where it came from only.
  process.on('unhandledRejection', (reason) => {
    logger.error(describeStray(reason), 'a promise was rejected and nothing handled it')
  })
  if (devSecretGenerated) {
    logger.warn(
      'JWT_SECRET is not set: using a random secret for this process only. HS256 tokens will ' +
        'not verify anywhere else and stop working at restart. Set JWT_SECRET (32+ characters).',
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
        'KEY_ENCRYPTION_SECRET is not set: RS256 private keys are stored UNENCRYPTED in the ' +
          'database, which only tessera dev allows (tessera start refuses RS256 tenants, and ' +
          'HS256 tenants with OpenID Connect clients, without it); anyone who can read the ' +
          'database can sign tokens for those tenants',
      )
    }
  }
  if (settings.adminToken !== undefined && settings.adminPort === 'off') {
    logger.warn('ADMIN_TOKEN is set but ADMIN_PORT=off: the admin API is not served anywhere')
  }
  const metrics = createMetrics()
  collectDefaultMetrics({ register: metrics.registry })
  // `dev` listens on PORT first: a tenant host written without a port takes the port actually
  // listened on (PORT=0 picks any free one) in its issuer URL, so the issuer is built knowing it.
  // A request that arrives meanwhile waits for the app. `start` validates everything, then
  // listens, and its issuer URLs are the hosts as written.
  let tenantServer: Server | undefined
  let tenantPort: number | undefined
  let resolveApp: (app: Koa) => void = () => undefined
  let rejectApp: (reason: unknown) => void = () => undefined
  if (mode === 'dev') {
    const app = new Promise<Koa>((resolve, reject) => {
      resolveApp = resolve
      rejectApp = reject
    })
    tenantServer = createHttpServer(app)
    tenantPort = await listen(tenantServer, settings.port, settings.host, 'PORT')
  }
  let issuer: Issuer
  try {
    // watch: reload on changes under TESSERA_CONFIG (files), re-import provider scripts when
    // their directory changes (kubernetes).
    issuer = await createIssuer({
      settings,
      mode,
      logger,
      env: vars,
      metrics,
      watch: true,
      ...(tenantPort === undefined ? {} : { port: tenantPort }),
    })
  } catch (error) {
    rejectApp(error)
    if (tenantServer !== undefined) {
      tenantServer.closeAllConnections()
      tenantServer.close()
    }
    throw error
  }
  resolveApp(issuer.app)

  // The tenants' port, and the admin port unless ADMIN_PORT=off: /metrics names every tenant
  // and stays off the tenants' hosts.
  const listeners: { server: Server; port: number; host: string; setting: string }[] = [
    {
      server: tenantServer ?? createHttpServer(issuer.app),
      port: settings.port,
      host: settings.host,
      setting: 'PORT',
    },
  ]
  if (settings.adminPort !== 'off') {
    listeners.push({
      server: createHttpServer(issuer.adminApp),
      port: settings.adminPort,
      host: settings.adminHost,
      setting: 'ADMIN_PORT',
    })
  }
  const results = await Promise.allSettled(
    listeners.map(({ server, port, host, setting }) =>
      server.listening && tenantPort !== undefined
        ? Promise.resolve(tenantPort)
        : listen(server, port, host, setting),
    ),
  )
  const failed = results.find((result) => result.status === 'rejected')
  if (failed !== undefined) {
    // Nothing partial is served: close whatever did listen, and the store, before exiting.
    for (const { server } of listeners) if (server.listening) server.close()
    await issuer.close()
    throw failed.reason
  }
  const ports = results.map((result) => (result.status === 'fulfilled' ? result.value : 0))
  const servers = listeners.map(({ server }) => server)
  const urls = listeners.map(({ host }, i) => `http://${urlHost(host)}:${ports[i]}`)
  logger.info(
    {
      url: urls[0],
      admin: urls[1] ?? 'off',
      // Whether /admin answers there; never the token itself.
      adminApi: urls[1] !== undefined && settings.adminToken !== undefined,
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
    // Stop accepting on both ports, let requests in flight finish, then drop idle keep-alive
    // sockets.
    void Promise.all(
      servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    )
      .then(() => issuer.close())
      .then(() => {
        logger.info('stopped')
        process.exit(0)
      })
    for (const server of servers) server.closeIdleConnections()
    setTimeout(() => {
      logger.warn('shutdown grace over: closing remaining connections')
      for (const server of servers) server.closeAllConnections()
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

/** A listen address as the host part of a URL: IPv6 literals go in brackets. */
function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** What may be logged of an unhandled rejection: its kind and call sites, never its message. */
function describeStray(reason: unknown): { kind: string; at?: string[] } {
  if (!(reason instanceof Error)) return { kind: typeof reason }
  // The first line of a stack repeats the message; the frames name files and lines only.
  const frames = (reason.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line))
  return { kind: reason.name, at: frames.slice(0, 5).map((line) => line.trim()) }
}
