import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { join } from 'node:path'

/** A Tenant as the tests write it: name and spec; the server adds the rest of the metadata. */
export interface TenantInput {
  name: string
  spec: Record<string, unknown>
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED'

interface StoredEvent {
  type: EventType
  object: Record<string, unknown>
  resourceVersion: number
}

/** An open watch: its response, and the socket under it (to cut it abruptly). */
interface OpenWatch {
  response: ServerResponse
  socket: Socket
}

export interface FakeApiServerOptions {
  namespace: string
}

/**
 * Just enough of the Kubernetes API server for `tenants.tessera.dev/v1` in one namespace: list
 * (a TenantList with metadata.resourceVersion) and watch (`?watch=true&resourceVersion=N`,
 * newline-delimited `{type, object}` events, resumable from any version not yet compacted).
 * Bearer-token authentication, like a service account's.
 */
export interface FakeApiServer {
  url: string
  namespace: string
  token: string
  /** Creates or replaces a Tenant (ADDED or MODIFIED). */
  apply(tenant: TenantInput): void
  /** Deletes a Tenant (DELETED). */
  remove(name: string): void
  /** Cuts every open watch connection without ending the response, as a network failure. */
  dropWatches(): void
  /**
   * Compacts the history: a watch from any version seen so far gets 410 Gone, as an `ERROR`
   * event with a Status (`event`) or an HTTP 410 (`http`); open watches get the ERROR event.
   */
  expire(how: 'event' | 'http'): void
  /** While set, lists answer 503 (an API server that cannot be reached yet). */
  failLists: boolean
  /** While set, watch requests answer 503. */
  failWatches: boolean
  /** List requests received, and watch requests received. */
  readonly lists: number
  readonly watches: number
  /** Watches currently open. */
  openWatches(): number
  /** Writes a kubeconfig for this server (http, bearer token) into `dir`; answers its path. */
  writeKubeConfig(dir: string): string
  close(): Promise<void>
}

export async function startFakeApiServer(options: FakeApiServerOptions): Promise<FakeApiServer> {
  const { namespace } = options
  const token = `test-token-${randomUUID()}`
  const base = `/apis/tessera.dev/v1/namespaces/${namespace}/tenants`
  const objects = new Map<string, Record<string, unknown>>()
  const history: StoredEvent[] = []
  const open = new Set<OpenWatch>()
  let resourceVersion = 1
  // Watches from a version below this get 410 Gone.
  let oldestWatchable = 1
  let created = 0
  let lists = 0
  let watches = 0
  let goneAs: 'event' | 'http' = 'event'
  const failing = { lists: false, watches: false }

  const status = (code: number, reason: string, message: string) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  })
  const sendJson = (response: ServerResponse, code: number, body: unknown): void => {
    response.writeHead(code, { 'content-type': 'application/json' })
    response.end(JSON.stringify(body))
  }
  const writeEvent = (watch: OpenWatch, type: string, object: unknown): void => {
    watch.response.write(`${JSON.stringify({ type, object })}\n`)
  }
  const record = (type: EventType, object: Record<string, unknown>): void => {
    const event = { type, object: structuredClone(object), resourceVersion }
    history.push(event)
    for (const watch of open) writeEvent(watch, type, event.object)
  }

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (request.headers.authorization !== `Bearer ${token}`) {
      sendJson(response, 401, status(401, 'Unauthorized', 'Unauthorized'))
      return
    }
    if (request.method !== 'GET' || url.pathname !== base) {
      sendJson(response, 404, status(404, 'NotFound', 'the server could not find the resource'))
      return
    }
    if (url.searchParams.get('watch') !== 'true') {
      lists++
      if (failing.lists) {
        sendJson(response, 503, status(503, 'ServiceUnavailable', 'etcd is not ready'))
        return
      }
      sendJson(response, 200, {
        apiVersion: 'tessera.dev/v1',
        kind: 'TenantList',
        metadata: { resourceVersion: String(resourceVersion) },
        items: [...objects.values()],
      })
      return
    }
    watches++
    if (failing.watches) {
      sendJson(response, 503, status(503, 'ServiceUnavailable', 'etcd is not ready'))
      return
    }
    const from = Number(url.searchParams.get('resourceVersion') ?? '0')
    if (from < oldestWatchable) {
      const gone = status(410, 'Expired', `too old resource version: ${from} (${oldestWatchable})`)
      if (goneAs === 'http') {
        sendJson(response, 410, gone)
      } else {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(`${JSON.stringify({ type: 'ERROR', object: gone })}\n`)
      }
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' })
    const watch: OpenWatch = { response, socket: request.socket }
    open.add(watch)
    response.on('close', () => open.delete(watch))
    for (const event of history) {
      if (event.resourceVersion > from) writeEvent(watch, event.type, event.object)
    }
    const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? '0')
    if (timeoutSeconds > 0) {
      const timer = setTimeout(() => response.end(), timeoutSeconds * 1000)
      response.on('close', () => clearTimeout(timer))
    }
  })

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const url = `http://127.0.0.1:${address.port}`

  return {
    url,
    namespace,
    token,
    apply({ name, spec }) {
      resourceVersion++
      const existing = objects.get(name)
      const metadata = (existing?.metadata ?? {
        name,
        namespace,
        uid: randomUUID(),
        // One second apart, as the API server's timestamps are, so creation order is clear.
        creationTimestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, created++)).toISOString(),
        generation: 0,
      }) as Record<string, unknown>
      const object = {
        apiVersion: 'tessera.dev/v1',
        kind: 'Tenant',
        metadata: {
          ...metadata,
          resourceVersion: String(resourceVersion),
          generation: Number(metadata.generation) + 1,
        },
        spec: structuredClone(spec),
      }
      objects.set(name, object)
      record(existing === undefined ? 'ADDED' : 'MODIFIED', object)
    },
    remove(name) {
      const existing = objects.get(name)
      if (existing === undefined) throw new Error(`no tenant ${name}`)
      resourceVersion++
      objects.delete(name)
      const metadata = existing.metadata as Record<string, unknown>
      record('DELETED', {
        ...existing,
        metadata: { ...metadata, resourceVersion: String(resourceVersion) },
      })
    },
    dropWatches() {
      for (const watch of open) watch.socket.destroy()
      open.clear()
    },
    expire(how) {
      goneAs = how
      // As if other resources changed: the next list has a version nobody watched from yet.
      resourceVersion++
      oldestWatchable = resourceVersion
      history.length = 0
      const gone = status(410, 'Expired', 'too old resource version')
      for (const watch of open) {
        writeEvent(watch, 'ERROR', gone)
        watch.response.end()
      }
      open.clear()
    },
    get failLists() {
      return failing.lists
    },
    set failLists(value: boolean) {
      failing.lists = value
    },
    get failWatches() {
      return failing.watches
    },
    set failWatches(value: boolean) {
      failing.watches = value
    },
    get lists() {
      return lists
    },
    get watches() {
      return watches
    },
    openWatches: () => open.size,
    writeKubeConfig(dir) {
      const file = join(dir, 'kubeconfig.yaml')
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '  - name: fake',
          '    cluster:',
          `      server: ${url}`,
          // client-node speaks plain http only with this set.
          '      insecure-skip-tls-verify: true',
          'users:',
          '  - name: tessera',
          '    user:',
          `      token: ${token}`,
          'contexts:',
          '  - name: fake',
          '    context: {cluster: fake, user: tessera, namespace: ' + namespace + '}',
          'current-context: fake',
          '',
        ].join('\n'),
      )
      return file
    },
    async close() {
      for (const watch of open) watch.socket.destroy()
      open.clear()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
