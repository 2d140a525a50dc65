import { createServer } from 'node:http'
import type { Server } from 'node:http'
import { ConfigError } from '@tessera/config-schema'
import type Koa from 'koa'
import { answerClientError } from '../http/client-error.js'

/**
 * How long a client may take to send its request headers. Node counts from the request's first
 * byte, so an idle keep-alive connection is not cut by it.
 */
export const HEADERS_TIMEOUT_MS = 10_000
/**
 * How long a client may take to send a whole request, body included (Node's default is 300 s,
 * long enough for a few slow clients to hold every socket; a MAX_BODY_BYTES body of 1 MB still
 * passes at 50 kB/s).
 */
export const REQUEST_TIMEOUT_MS = 20_000
/**
 * How long an idle keep-alive connection stays open: longer than the idle timeout of the proxies
 * usually in front (60 s for nginx and most cloud load balancers), so that the proxy, not the
 * issuer, closes it, and never sends a request on a socket the issuer is closing.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000
/** How often Node checks the two timeouts above (its default, 30 s, would double them). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000

/** The port is taken by another process: the operator picks another one with `setting`. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly setting: string,
  ) {
    super(`port ${port} is in use; set ${setting}`)
    this.name = 'PortInUseError'
  }
}

/**
 * An HTTP server for `app` with the timeouts above. Given a promise (`dev` listens before its
 * issuer is built), a request waits until the app is there; the server is closed if it never is.
 */
export function createHttpServer(app: Koa | Promise<Koa>): Server {
  const options = {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
  }
  let server: Server
  if (app instanceof Promise) {
    const handling = app.then((built) => built.callback())
    // No rejection goes unhandled here: the caller awaits `app` itself and closes the server.
    handling.catch(() => undefined)
    server = createServer(options, (req, res) => {
      void handling.then(
        (handle) => handle(req, res),
        () => res.destroy(),
      )
    })
  } else {
    const handle = app.callback()
    server = createServer(options, (req, res) => void handle(req, res))
  }
  server.on('clientError', answerClientError)
  return server
}

/**
 * Listens on `host:port` and resolves with the port (the chosen one for port 0). A port in use
 * is a {@link PortInUseError}; any other refusal a configuration problem naming `setting`; never
 * a stack trace.
 */
export function listen(
  server: Server,
  port: number,
  host: string,
  setting: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      if (error.code === 'EADDRINUSE') {
        reject(new PortInUseError(port, setting))
        return
      }
      const reason =
        error.code === 'EACCES'
          ? 'permission denied'
          : error.code === 'EADDRNOTAVAIL'
            ? 'the address is not available on this machine'
            : (error.code ?? error.message)
      reject(
        new ConfigError([
          {
            file: 'environment',
            line: 0,
            path: setting,
            message: `cannot listen on ${host}:${port}: ${reason}`,
          },
        ]),
      )
    }
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      const address = server.address()
      resolve(typeof address === 'object' && address !== null ? address.port : port)
    })
  })
}
