import { connect, createServer } from 'node:net'
import type { Server, Socket } from 'node:net'

/** A TCP forwarder that a test can cut and restore, to stand in for a database going away. */
export interface TcpProxy {
  /** The port it listens on (127.0.0.1); the same across `cut` and `restore`. */
  readonly port: number
  /** Stops listening and drops every connection through it: the target is unreachable. */
  cut(): Promise<void>
  /** Listens again on the same port. */
  restore(): Promise<void>
  close(): Promise<void>
}

/**
 * Forwards 127.0.0.1:<port> to `target`. Cutting it looks to a client like the server went
 * away: open connections drop, new ones are refused.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = connect(target.port, target.host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      next.once('error', reject)
      next.listen(port, '127.0.0.1', () => {
        server = next
        const address = next.address()
        resolve(typeof address === 'object' && address !== null ? address.port : port)
      })
    })
  const cut = async (): Promise<void> => {
    const current = server
    server = undefined
    for (const socket of sockets) socket.destroy()
    if (current !== undefined) await new Promise((resolve) => current.close(resolve))
  }
  const port = await listen(0)
  return {
    port,
    cut,
    restore: async () => {
      if (server === undefined) await listen(port)
    },
    close: cut,
  }
}
