/**
 * Lists and watches the Tenant resources of one namespace over HTTP with
 * `@kubernetes/client-node`. Every answer is checked with zod before it is handed on; failures
 * are described in one line that never carries headers or bodies beyond a Status message.
 *
 * @module
 */
import { ApiException, CustomObjectsApi, Observable, Watch } from '@kubernetes/client-node'
import type {
  KubeConfig,
  ObservableMiddleware,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node'
import type { Logger } from 'pino'
import {
  ResourceSchema,
  StatusSchema,
  TENANT_GROUP,
  TENANT_PLURAL,
  TENANT_VERSION,
  TenantListSchema,
} from './resources.js'
import type { Resource, Status } from './resources.js'

export interface TenantClientOptions {
  kubeConfig: KubeConfig
  namespace: string
  logger: Logger
  /** Aborts a list under way (the source is closing). */
  signal: AbortSignal
  /** Longest wait for a list response. */
  requestTimeoutMs: number
  /**
   * How long the API server keeps one watch open; default 5 to 6 minutes, at random, so that
   * replicas do not reconnect in step.
   */
  watchTimeoutSeconds?: number
}

/** One list: the resources with a name, and the version to watch from. */
export interface TenantList {
  items: Resource[]
  resourceVersion: string
}

/** Kinds of watch events handed on: the changes, and bookmarks (a newer resourceVersion). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'

/** How one watch connection ended. */
export interface WatchOutcome {
  /** 410 Gone: the resource version expired; list again. */
  gone: boolean
  /** ADDED, MODIFIED and DELETED events delivered (bookmarks not counted). */
  events: number
  durationMs: number
  /** Why it ended abnormally, for the log. */
  error?: string
  /** Ended on purpose: a reload or close. */
  cancelled?: boolean
}

/** A watch under way: `cancel` ends it and settles `outcome` as cancelled. */
export interface RunningWatch {
  outcome: Promise<WatchOutcome>
  readonly cancel: () => void
}

export interface TenantClient {
  /** @throws on any failure, or an answer that is not a TenantList */
  list(): Promise<TenantList>
  /** One watch connection from `resourceVersion`; `onEvent` sees each change in order. */
  watch(
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: Resource) => void,
  ): RunningWatch
}

export function createTenantClient(options: TenantClientOptions): TenantClient {
  const { kubeConfig, namespace, logger } = options
  const api = kubeConfig.makeApiClient(CustomObjectsApi)
  const watcher = new Watch(kubeConfig)
  const path = `/apis/${TENANT_GROUP}/${TENANT_VERSION}/namespaces/${encodeURIComponent(namespace)}/${TENANT_PLURAL}`

  const list = async (): Promise<TenantList> => {
    const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.requestTimeoutMs)])
    const middleware: ObservableMiddleware = {
      pre: (context: RequestContext) => {
        context.setSignal(signal)
        return new Observable(Promise.resolve(context))
      },
      post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
    }
    const body: unknown = await api.listNamespacedCustomObject(
      { group: TENANT_GROUP, version: TENANT_VERSION, namespace, plural: TENANT_PLURAL },
      { middleware: [middleware], middlewareMergeStrategy: 'append' },
    )
    const parsed = TenantListSchema.safeParse(body)
    if (!parsed.success) {
      throw new Error('the API server answered something other than a TenantList')
    }
    const items: Resource[] = []
    for (const raw of parsed.data.items ?? []) {
      // List items may leave out apiVersion and kind; the resource schema wants them.
      const item = ResourceSchema.safeParse(
        typeof raw === 'object' && raw !== null
          ? { apiVersion: `${TENANT_GROUP}/${TENANT_VERSION}`, kind: 'Tenant', ...raw }
          : raw,
      )
      if (item.success) items.push(item.data)
      else logger.warn({ namespace }, 'ignoring a listed Tenant without metadata.name')
    }
    return { items, resourceVersion: parsed.data.metadata.resourceVersion }
  }

  const watch = (
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: Resource) => void,
  ): RunningWatch => {
    let cancel: () => void = () => undefined
    const outcome = new Promise<WatchOutcome>((settle) => {
      const started = Date.now()
      let events = 0
      let finished = false
      let controller: AbortController | undefined
      const timeoutSeconds = options.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 60)
      const finish = (result: Omit<WatchOutcome, 'events' | 'durationMs'>): void => {
        if (finished) return
        finished = true
        clearTimeout(guard)
        controller?.abort()
        settle({ ...result, events, durationMs: Date.now() - started })
      }
      // The API server ends the watch after timeoutSeconds; one still open well after that is
      // a half-open connection that would never deliver anything again.
      const guard = setTimeout(
        () => finish({ gone: false, error: 'the watch outlived its timeout' }),
        (timeoutSeconds + 30) * 1000,
      )
      guard.unref()
      cancel = () => finish({ gone: false, cancelled: true })
      const handle = (type: string, raw: unknown): void => {
        if (finished) return
        if (type === 'ERROR') {
          const status = StatusSchema.safeParse(raw)
          const code = status.success ? status.data.code : undefined
          if (code === 410) finish({ gone: true })
          else finish({ gone: false, error: describeStatus(status.success ? status.data : {}) })
          return
        }
        const object = ResourceSchema.safeParse(raw)
        if (!object.success) {
          logger.warn({ namespace, type }, 'ignoring a watch event without metadata.name')
          return
        }
        if (type === 'BOOKMARK') {
          if (object.data.metadata.resourceVersion !== undefined) onEvent(type, object.data)
          return
        }
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return
        events++
        onEvent(type, object.data)
      }
      const query = { resourceVersion, allowWatchBookmarks: true, timeoutSeconds }
      watcher
        .watch(
          path,
          query,
          (type: string, raw: unknown) => {
            try {
              handle(type, raw)
            } catch (error) {
              logger.error({ err: error }, 'handling a Tenant watch event failed')
            }
          },
          (error: unknown) => {
            if (error === null || error === undefined) finish({ gone: false })
            else if (statusCodeOf(error) === 410) finish({ gone: true })
            else finish({ gone: false, error: describeError(error) })
          },
        )
        .then(
          (started) => {
            controller = started
            if (finished) started.abort()
          },
          (error: unknown) => finish({ gone: false, error: describeError(error) }),
        )
    })
    return { outcome, cancel: () => cancel() }
  }

  return { list, watch }
}

function statusCodeOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code
  const { statusCode } = error as { statusCode?: unknown }
  return typeof statusCode === 'number' ? statusCode : undefined
}

function describeStatus(status: Status): string {
  const code = status.code === undefined ? '' : `HTTP ${status.code}`
  const text = status.message ?? status.reason ?? 'error event'
  return code === '' ? text : `${code}: ${text}`
}

/** One line about a failed request; never headers or bodies beyond the Status message. */
export function describeError(error: unknown): string {
  if (error instanceof ApiException) {
    const status = StatusSchema.safeParse(
      typeof error.body === 'string' ? safeJson(error.body) : error.body,
    )
    return describeStatus({ ...(status.success ? status.data : {}), code: error.code })
  }
  const code = statusCodeOf(error)
  const message = error instanceof Error ? error.message : String(error)
  return code === undefined ? message : `HTTP ${code}: ${message}`
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** What an operator should check, for the failures that are configuration, not the network. */
export function hint(error: unknown, namespace: string): { hint?: string } {
  switch (statusCodeOf(error)) {
    case 401:
      return { hint: 'the API server refused the credentials (service-account token, KUBECONFIG)' }
    case 403:
      return {
        hint: `the service account needs get, list and watch on tenants.tessera.dev in namespace ${namespace}`,
      }
    case 404:
      return {
        hint: 'is the Tenant CustomResourceDefinition (tenants.tessera.dev) installed, and the namespace right?',
      }
    default:
      return {}
  }
}
