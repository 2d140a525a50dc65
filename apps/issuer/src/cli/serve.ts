import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import cluster from 'node:cluster'
import { parseSettings } from '@tessera/config-schema'
import type { Settings } from '@tessera/config-schema'
import { collectDefaultMetrics, Registry } from 'prom-client'
import type Koa from 'koa'
import type { Logger } from 'pino'
import { adminApiOptions, createAdminApp } from '../admin.js'
import { answerPrimary, forkWorkers, WORKER_SLOT_VARIABLE } from '../cluster.js'
import type { Workers } from '../cluster.js'
import { createIssuer } from '../issuer.js'
import { collectGarbage } from '../start-garbage.js'
import type { Issuer } from '../issuer.js'
import type { TenantRuntime } from '../tenants.js'
import { MAKE_KEY_ENCRYPTION_SECRET } from '../key-encryption.js'
import { createMetrics } from '../metrics.js'
import { exitProcess, guardProcess } from '../process-guard.js'
import { assertConfigExists } from './config-directory.js'
import { createConsoleLogger } from './console-logger.js'
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
      // With --workers, worker 1 alone stores the parse results of the tenant files.
      storeParseResults: slot === undefined || slot === 1,
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
  // A worker serves the tenants only: its primary owns the admin listener.
  if (settings.adminPort !== 'off' && slot === undefined) {
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
  if (slot !== undefined) {
    answerPrimary({
      registry: metrics.registry,
      ready: () => issuer.ready(),
      ping: () => issuer.store.ping(),
    }).listening(ports[0] ?? 0)
  } else {
    logger.info(
      {
        url: urls[0],
        admin: urls[1] ?? 'off',
        // Whether /admin answers there; never the token itself.
        adminApi: urls[1] !== undefined && settings.adminToken !== undefined,
        ...servedSummary(settings, issuer),
      },
      'tessera issuer listening',
    )
  }

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
        exitProcess(0)
      })
    for (const server of servers) server.closeIdleConnections()
    setTimeout(() => {
      logger.warn('shutdown grace over: closing remaining connections')
      for (const server of servers) server.closeAllConnections()
    }, SHUTDOWN_GRACE_MS).unref()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  // A worker whose primary is gone (killed) has nobody to hand it connections: it ends.
  if (slot !== undefined) process.on('disconnect', () => stop('disconnect'))

  // Configuration reload without a restart: SIGHUP (the sources also follow changes themselves).
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading the configuration')
    void issuer.reload()
  })
}

/**
 * The primary of `tessera start --workers N`: builds an issuer of its own first, so that every
 * problem stops the start before any fork (one line each, as without workers) and the store is
 * migrated once; then listens on ADMIN_PORT and forks the workers, which serve PORT together.
 * With ADMIN_TOKEN its issuer stays, to serve the admin API (its own store connection, its own
 * view of the tenants, reloaded as the workers' are); without, it is closed before the fork
 * (buildPrimaryIssuer).
 * /metrics aggregates the workers'; /readyz asks them.
 */
async function servePrimary(
  settings: Settings,
  vars: Record<string, string | undefined>,
  logger: Logger,
): Promise<void> {
  const { issuer, summary } = await buildPrimaryIssuer(settings, vars, logger)
  // What the closed issuer held is garbage once its last callbacks have run (a collection right
  // away still found 59 of its 60 MB at ten thousand tenants): collected a moment later, as the
  // workers start. The memory reducer returns the rest of its pages within half a minute.
  if (issuer === undefined) setTimeout(collectGarbage, 1_000).unref()
  // Forked below; the admin app needs to ask them, the workers need the admin port free first.
  const forked: { workers?: Workers } = {}
  let adminServer: Server | undefined
  let adminUrl = 'off'
  if (settings.adminPort !== 'off') {
    const adminApp = createAdminApp({
      registry: {
        contentType: Registry.PROMETHEUS_CONTENT_TYPE,
        metrics: () => forked.workers?.registry.metrics() ?? Promise.resolve(''),
      },
      logger,
      ready: () => issuer?.ready() ?? true,
      ping: () => issuer?.store.ping() ?? Promise.resolve(),
      workers: () => forked.workers?.check() ?? Promise.resolve('workers not started'),
      ...(issuer === undefined
        ? {}
        : adminApiOptions(settings, {
            registry: issuer.registry,
            keys: issuer.store.keys,
            now: Date.now,
          })),
    })
    adminServer = createHttpServer(adminApp)
    try {
      const port = await listen(adminServer, settings.adminPort, settings.adminHost, 'ADMIN_PORT')
      adminUrl = `http://${urlHost(settings.adminHost)}:${port}`
    } catch (error) {
      await issuer?.close()
      throw error
    }
  }
  const closeAll = async (): Promise<void> => {
    if (adminServer?.listening === true) {
      await new Promise<void>((resolve) => adminServer.close(() => resolve()))
    }
    await issuer?.close()
  }
  // Node's own variable: `rr` asks for the primary to deal connections in turn.
  const workers = forkWorkers(settings.workers, logger, {
    roundRobin: vars.NODE_CLUSTER_SCHED_POLICY === 'rr',
  })
  forked.workers = workers
  let port: number
  try {
    port = await workers.listening
  } catch (error) {
    await workers.stop(SHUTDOWN_GRACE_MS)
    adminServer?.closeAllConnections()
    await closeAll()
    throw error
  }
  logger.info(
    {
      url: `http://${urlHost(settings.host)}:${port}`,
      admin: adminUrl,
      adminApi: adminUrl !== 'off' && settings.adminToken !== undefined,
      workers: settings.workers,
      ...summary,
    },
    'tessera issuer listening',
  )

  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: every worker finishes its requests in flight')
    adminServer?.closeIdleConnections()
    // The workers have SHUTDOWN_GRACE_MS to finish; a little more before they are killed.
    void workers
      .stop(SHUTDOWN_GRACE_MS + 5_000)
      .then(closeAll)
      .then(() => {
        logger.info('stopped')
        exitProcess(0)
      })
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGHUP', () => {
    logger.info(
      issuer === undefined
        ? 'SIGHUP: every worker reloads the configuration'
        : 'SIGHUP: reloading the configuration, and every worker too',
    )
    void issuer?.reload()
    workers.reload()
  })
}

/**
 * The primary's issuer, which proves the configuration and migrates the store before any fork,
 * and what the listening line says of it. Without ADMIN_TOKEN nothing in the primary serves a
 * tenant, so it is closed here and only the summary stays (the workers answer for readiness
 * and reload on SIGHUP themselves): made and dropped in this function, so that no frame of the
 * primary's keeps it, and the memory its tenants held (as much as a worker's) can go.
 */
async function buildPrimaryIssuer(
  settings: Settings,
  vars: Record<string, string | undefined>,
  logger: Logger,
): Promise<{ issuer: Issuer | undefined; summary: Record<string, unknown> }> {
  const issuer = await createIssuer({
    settings,
    mode: 'start',
    logger,
    env: vars,
    metrics: createMetrics(),
    watch: true,
    storeParseResults: false,
  })
  const summary = servedSummary(settings, issuer)
  if (settings.adminToken !== undefined) return { issuer, summary }
  await issuer.close()
  return { issuer: undefined, summary }
}

/** The most tenants the `tessera issuer listening` line describes one by one. */
const LISTED_TENANTS = 100

function describeServed(runtime: TenantRuntime): Record<string, unknown> {
  return {
    name: runtime.tenant.name,
    issuer: runtime.issuer,
    alg: runtime.tenant.jwtAlgorithm,
    kid: runtime.keyRing.activeKid(),
  }
}

/** What the `tessera issuer listening` line says of the tenants, the database and the source. */
function servedSummary(settings: Settings, issuer: Issuer): Record<string, unknown> {
  const served = issuer.registry.all()
  return {
    // One line of ten thousand tenants helps nobody and costs megabytes: past a hundred, the
    // line gives the count (the admin API's GET /admin/tenants lists them all).
    ...(served.length > LISTED_TENANTS
      ? {
          tenantCount: served.length,
          tenants: served.slice(0, LISTED_TENANTS).map(describeServed),
        }
      : { tenants: served.map(describeServed) }),
    database: settings.databaseUrl.split(':', 1)[0],
    source:
      settings.configSource === 'kubernetes'
        ? `kubernetes:${settings.kubernetesNamespace}`
        : settings.config,
    ready: issuer.ready(),
  }
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
}

/** A listen address as the host part of a URL: IPv6 literals go in brackets. */
function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}
