import type { Server } from 'node:http'
import type { Settings } from '@tessera/config-schema'
import type Koa from 'koa'
import type { Logger } from 'pino'
import { collectDefaultMetrics } from 'prom-client'
import { answerPrimary } from '../cluster/ipc.js'
import { createIssuer } from '../issuer.js'
import type { Issuer } from '../issuer.js'
import { createMetrics } from '../observability/metrics.js'
import { createHttpServer, listen } from './listen.js'
import { servedSummary, urlHost } from './listening-line.js'
import { closeServers, stopOnSignals } from './shutdown.js'

/** A process that serves the tenants: the only one, or one worker of `--workers`. */
export interface TenantsProcess {
  mode: 'dev' | 'start'
  settings: Settings
  /** The environment with the flags' settings over it. */
  vars: Record<string, string | undefined>
  logger: Logger
  /** A worker's slot (1 to N); undefined in a process without workers. */
  slot: number | undefined
}

interface Listener {
  server: Server
  port: number
  host: string
  setting: string
}

/**
 * Builds the issuer and serves the tenants on PORT and, in a process without workers, the admin
 * listener on ADMIN_PORT. A worker announces its port to its primary, which owns the admin
 * listener and prints the listening line; a process without workers prints it itself.
 */
export async function serveTenants(run: TenantsProcess): Promise<void> {
  const { mode, settings, logger, slot } = run
  const metrics = createMetrics()
  collectDefaultMetrics({ register: metrics.registry })
  // `dev` listens on PORT first: a tenant host written without a port takes the port actually
  // listened on (PORT=0 picks any free one) in its issuer URL, so the issuer is built knowing it.
  // A request that arrives meanwhile waits for the app. `start` validates everything, then
  // listens, and its issuer URLs are the hosts as written.
  const early = mode === 'dev' ? await listenBeforeBuilding(settings) : undefined
  let issuer: Issuer
  try {
    // watch: reload on changes under TESSERA_CONFIG (files), re-import provider scripts when
    // their directory changes (kubernetes).
    issuer = await createIssuer({
      settings,
      mode,
      logger,
      env: run.vars,
      metrics,
      watch: true,
      // With --workers, worker 1 alone stores the parse results of the tenant files.
      storeParseResults: slot === undefined || slot === 1,
      ...(early === undefined ? {} : { port: early.port }),
    })
  } catch (error) {
    early?.fail(error)
    throw error
  }
  early?.serve(issuer.app)

  // The tenants' port, and the admin port unless ADMIN_PORT=off: /metrics names every tenant
  // and stays off the tenants' hosts.
  const listeners: Listener[] = [
    {
      server: early?.server ?? createHttpServer(issuer.app),
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
  const ports = await listenAll(listeners, early?.port, issuer)
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

  stopOnSignals(logger, {
    message: 'shutting down: finishing requests in flight',
    // Stop accepting on both ports, let requests in flight finish, then drop idle keep-alive
    // sockets.
    drain: () => closeServers(servers, logger).then(() => issuer.close()),
    onDisconnect: slot !== undefined,
  })
  // Configuration reload without a restart: SIGHUP (the sources also follow changes themselves).
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading the configuration')
    void issuer.reload()
  })
}

/** `dev`'s tenants' listener, on PORT before the issuer is built. */
interface EarlyListener {
  server: Server
  /** The port listened on. */
  port: number
  /** Serves `app` to the requests that waited and every one after. */
  serve(app: Koa): void
  /** The issuer could not be built: the requests that waited fail, and the listener closes. */
  fail(error: unknown): void
}

async function listenBeforeBuilding(settings: Settings): Promise<EarlyListener> {
  let resolveApp: (app: Koa) => void = () => undefined
  let rejectApp: (reason: unknown) => void = () => undefined
  const app = new Promise<Koa>((resolve, reject) => {
    resolveApp = resolve
    rejectApp = reject
  })
  const server = createHttpServer(app)
  const port = await listen(server, settings.port, settings.host, 'PORT')
  return {
    server,
    port,
    serve: resolveApp,
    fail(error) {
      rejectApp(error)
      server.closeAllConnections()
      server.close()
    },
  }
}

/**
 * Listens on every listener not listening yet (`dev`'s tenants' listener is, on `earlyPort`),
 * and answers their ports in order. Nothing partial is served: when one cannot listen, whatever
 * did is closed, and the issuer, before the failure is thrown.
 */
async function listenAll(
  listeners: readonly Listener[],
  earlyPort: number | undefined,
  issuer: Issuer,
): Promise<number[]> {
  const results = await Promise.allSettled(
    listeners.map(({ server, port, host, setting }) =>
      server.listening && earlyPort !== undefined
        ? Promise.resolve(earlyPort)
        : listen(server, port, host, setting),
    ),
  )
  const failed = results.find((result) => result.status === 'rejected')
  if (failed !== undefined) {
    for (const { server } of listeners) if (server.listening) server.close()
    await issuer.close()
    throw failed.reason
  }
  return results.map((result) => (result.status === 'fulfilled' ? result.value : 0))
}
