import type { Server } from 'node:http'
import type { Settings } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { Registry } from 'prom-client'
import { adminApiOptions, createAdminApp } from '../admin/admin-app.js'
import { forkWorkers } from '../cluster/supervisor.js'
import type { Workers } from '../cluster/supervisor.js'
import { createIssuer } from '../issuer.js'
import type { Issuer } from '../issuer.js'
import { createMetrics } from '../observability/metrics.js'
import { collectGarbage } from '../startup/start-garbage.js'
import { createHttpServer, listen } from './listen.js'
import { servedSummary, urlHost } from './listening-line.js'
import { SHUTDOWN_GRACE_MS, stopOnSignals } from './shutdown.js'

/**
 * The primary of `tessera start --workers N`: builds an issuer of its own first, so that every
 * problem stops the start before any fork (one line each, as without workers) and the store is
 * migrated once; then listens on ADMIN_PORT and forks the workers, which serve PORT together.
 * With ADMIN_TOKEN its issuer stays, to serve the admin API (its own store connection, its own
 * view of the tenants, reloaded as the workers' are); without, it is closed before the fork
 * (buildPrimaryIssuer).
 * /metrics aggregates the workers'; /readyz asks them.
 */
export async function servePrimary(
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
  const admin = await listenAdmin(settings, logger, issuer, forked)
  const closeAll = async (): Promise<void> => {
    const adminServer = admin?.server
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
    admin?.server.closeAllConnections()
    await closeAll()
    throw error
  }
  const adminUrl = admin?.url ?? 'off'
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

  stopOnSignals(logger, {
    message: 'shutting down: every worker finishes its requests in flight',
    drain: async () => {
      admin?.server.closeIdleConnections()
      // The workers have SHUTDOWN_GRACE_MS to finish; a little more before they are killed.
      await workers.stop(SHUTDOWN_GRACE_MS + 5_000)
      await closeAll()
    },
  })
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
 * The primary's admin listener, unless ADMIN_PORT=off: /metrics aggregates the workers',
 * /readyz asks them, and the admin API runs on the primary's issuer when it kept one. A port
 * that cannot be listened on closes that issuer and throws.
 */
async function listenAdmin(
  settings: Settings,
  logger: Logger,
  issuer: Issuer | undefined,
  forked: { workers?: Workers },
): Promise<{ server: Server; url: string } | undefined> {
  if (settings.adminPort === 'off') return undefined
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
  const server = createHttpServer(adminApp)
  try {
    const port = await listen(server, settings.adminPort, settings.adminHost, 'ADMIN_PORT')
    return { server, url: `http://${urlHost(settings.adminHost)}:${port}` }
  } catch (error) {
    await issuer?.close()
    throw error
  }
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
