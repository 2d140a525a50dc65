import type { Server } from 'node:http'
import type { Logger } from 'pino'
import { exitProcess } from '../providers/process-guard.js'

/** How long requests in flight have to finish once a shutdown begins. */
export const SHUTDOWN_GRACE_MS = 10_000

/** How a serving process stops. */
export interface ShutdownOptions {
  /** The line logged as the shutdown begins (with the signal). */
  message: string
  /** Everything to finish and close before the process exits 0. */
  drain: () => Promise<void>
  /** A worker of `--workers`: whose primary is gone has nobody to hand it connections, and ends. */
  onDisconnect?: boolean
}

/**
 * Stops the process on SIGTERM and SIGINT: logs `message`, drains, logs `stopped` and exits 0.
 * A second signal while draining changes nothing.
 */
export function stopOnSignals(logger: Logger, options: ShutdownOptions): void {
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, options.message)
    void options.drain().then(() => {
      logger.info('stopped')
      exitProcess(0)
    })
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  if (options.onDisconnect === true) process.on('disconnect', () => stop('disconnect'))
}

/**
 * Closes `servers` gracefully: they stop accepting, requests in flight finish, idle keep-alive
 * sockets are dropped at once, and whatever is still open after {@link SHUTDOWN_GRACE_MS} is
 * closed. Resolves once every server has closed.
 */
export function closeServers(servers: readonly Server[], logger: Logger): Promise<void> {
  const closed = Promise.all(
    servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  )
  for (const server of servers) server.closeIdleConnections()
  setTimeout(() => {
    logger.warn('shutdown grace over: closing remaining connections')
    for (const server of servers) server.closeAllConnections()
  }, SHUTDOWN_GRACE_MS).unref()
  return closed.then(() => undefined)
}
