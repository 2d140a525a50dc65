/**
 * The `kubernetes` source: `tenants.tessera.dev/v1` resources of one namespace, listed once and
 * then watched, each tenant validated, built and served on its own.
 *
 * @module
 */
import { existsSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  Observable,
  Watch,
} from '@kubernetes/client-node'
import type { ObservableMiddleware, RequestContext, ResponseContext } from '@kubernetes/client-node'
import { ConfigError, formatConfigIssue, parseConfig } from '@tessera/config-schema'
import type { ConfigDocument, ConfigIssue, Tenant } from '@tessera/config-schema'
import type { Logger } from 'pino'
import * as z from 'zod'
import { describeProblems } from './source.js'
import type { TenantSource, TenantTarget } from './source.js'
import { watchPath } from './watch-path.js'

/** The Tenant resource: `tenants.tessera.dev`, version v1, namespaced. */
export const TENANT_GROUP = 'tessera.dev'
export const TENANT_VERSION = 'v1'
export const TENANT_PLURAL = 'tenants'

/** Where a pod finds its service-account token: the sign of running in a cluster. */
const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token'

/** How the source retries; the defaults suit a cluster (client-go waits 0.8 s to 30 s). */
export interface KubernetesRetryOptions {
  /** First wait after a failure, doubled on each failure in a row (default 500). */
  initialMs: number
  /** Longest wait (default 30 000). */
  maxMs: number
}

export interface KubernetesSourceOptions {
  /** TESSERA_KUBERNETES_NAMESPACE: whose Tenant resources are served. */
  namespace: string
  /** TESSERA_CONFIG: the directory that `spec.providers` paths resolve against. */
  providerDirectory: string
  /** Environment for `{env: VAR}` references. */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting. */
  jwtSecret: string | undefined
  logger: Logger
  /** The API server and credentials; default: {@link loadKubeConfig} of `env`. */
  kubeConfig?: KubeConfig
  /** Re-import every tenant's provider scripts when the provider directory changes. */
  watchProviders: boolean
  retry?: Partial<KubernetesRetryOptions>
  /**
   * How long the API server keeps one watch open (default 5 to 6 minutes, at random, so that
   * replicas do not reconnect in step); the source then resumes from the last resourceVersion.
   */
  watchTimeoutSeconds?: number
  /** Longest wait for a list response (default 30 000). */
  requestTimeoutMs?: number
}

/** A watch that delivered events, or stayed open this long, was healthy: no backoff after it. */
const HEALTHY_WATCH_MS = 5_000

/**
 * The API server configuration: KUBECONFIG when set (one file or several, joined with `:`),
 * else the pod's service account, else ~/.kube/config (`KubeConfig.loadFromDefault`).
 *
 * @throws ConfigError when none is found (client-node would quietly fall back to
 *   http://localhost:8080) or the file cannot be read; the message never repeats file contents,
 *   which hold credentials.
 */
export function loadKubeConfig(env: Record<string, string | undefined>): KubeConfig {
  const kubeConfig = new KubeConfig()
  const files = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file !== '')
  const problem = (path: string, message: string) =>
    new ConfigError([{ file: 'environment', line: 0, path, message }])
  if (files.length > 0) {
    files.forEach((file, index) => {
      const loading = index === 0 ? kubeConfig : new KubeConfig()
      try {
        loading.loadFromFile(file)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        throw problem(
          'KUBECONFIG',
          code === 'ENOENT'
            ? `no such file: ${file}`
            : code === 'EACCES'
              ? `permission denied: ${file}`
              : `not a valid kubeconfig file: ${file}`,
        )
      }
      if (index === 0) return
      try {
        // As with kubectl, the first file's current-context wins.
        kubeConfig.mergeConfig(loading, true)
      } catch {
        throw problem('KUBECONFIG', `${file} repeats a cluster, user or context name`)
      }
    })
  } else if (
    existsSync(SERVICE_ACCOUNT_TOKEN_FILE) ||
    existsSync(join(homedir(), '.kube', 'config'))
  ) {
    try {
      kubeConfig.loadFromDefault()
    } catch {
      throw problem('KUBECONFIG', 'the in-cluster or ~/.kube/config configuration cannot be read')
    }
  } else {
    throw problem(
      'TESSERA_CONFIG_SOURCE',
      'kubernetes needs the API server: run in a pod with a service account, or set KUBECONFIG',
    )
  }
  if (kubeConfig.getCurrentCluster() === null) {
    throw problem('KUBECONFIG', 'names no current context with a cluster')
  }
  return kubeConfig
}

/** The metadata every object from the API server has. */
const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().optional(),
})
const ResourceSchema = z.looseObject({ metadata: ObjectMetaSchema })
type Resource = z.infer<typeof ResourceSchema>

const TenantListSchema = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.string().min(1) }),
  items: z.array(z.unknown()).nullish(),
})

/** `metav1.Status`, as sent in a watch ERROR event. */
const StatusSchema = z.looseObject({
  code: z.number().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
})

/** The latest version of a resource, as listed or watched. */
interface Seen {
  object: Resource
  resourceVersion: string | undefined
}

/** A tenant being served, and the resource version it came from. */
interface Served {
  resourceVersion: string | undefined
  /** Its document as validated, for the rules across tenants. */
  document: ConfigDocument
  tenant: Tenant
}

/** The last refusal of a resource, so that a retry finding the same problems stays quiet. */
interface Refusal {
  resourceVersion: string | undefined
  summary: string
  /** Refused by the build (provider import, key store), not by validation. */
  build: boolean
}

/** How one watch connection ended. */
interface WatchOutcome {
  /** 410 Gone: the resource version expired; list again. */
  gone: boolean
  events: number
  durationMs: number
  /** Why it ended abnormally, for the log. */
  error?: string
  /** Ended on purpose: a reload or close. */
  cancelled?: boolean
}

/**
 * Lists and watches the Tenant resources of `namespace` and serves each valid one.
 *
 * - Each resource is validated alone with config-schema's `parseConfig` (issues name it
 *   `kubernetes:NAMESPACE/NAME`), then against the tenants already served (hosts and client_ids
 *   are unique). A refused resource is logged with every problem; the last good version of that
 *   tenant keeps serving, or it stays absent, and no other tenant is touched.
 * - A tenant that validates but cannot be built (a provider script that fails to import, a key
 *   store error) is refused the same way.
 * - `spec.providers` are paths inside the provider directory; absolute paths and paths leading
 *   out of it are refused.
 * - A dropped watch reconnects with exponential backoff from the last resourceVersion; 410 Gone
 *   lists again and converges (resources gone from the list are removed). Nothing here ends the
 *   process: every failure is logged and retried.
 */
export function createKubernetesSource(options: KubernetesSourceOptions): TenantSource {
  const { logger, namespace } = options
  const providerDirectory = resolve(options.providerDirectory)
  // Both checked before either throws: every problem is reported at once.
  const issues: ConfigIssue[] = []
  const collect = <T>(read: () => T): T | undefined => {
    try {
      return read()
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      issues.push(...error.issues)
      return undefined
    }
  }
  const kubeConfig = collect(() => options.kubeConfig ?? loadKubeConfig(options.env))
  collect(() => checkProviderDirectory(providerDirectory))
  if (kubeConfig === undefined || issues.length > 0) throw new ConfigError(issues)
  const retry: KubernetesRetryOptions = { initialMs: 500, maxMs: 30_000, ...options.retry }
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000
  const api = kubeConfig.makeApiClient(CustomObjectsApi)
  const watcher = new Watch(kubeConfig)
  const path = `/apis/${TENANT_GROUP}/${TENANT_VERSION}/namespaces/${encodeURIComponent(namespace)}/${TENANT_PLURAL}`
  const where = (name: string) => `kubernetes:${namespace}/${name}`

  let target: TenantTarget | undefined
  let isLoaded = false
  let closed = false
  const closing = new AbortController()
  let cancelWatch: (() => void) | undefined
  let wake: (() => void) | undefined
  let stopWatchingProviders: (() => void) | undefined

  const desired = new Map<string, Seen>()
  const served = new Map<string, Served>()
  const refused = new Map<string, Refusal>()

  // Every change to the served tenants goes through this chain, one at a time and in the order
  // received: a relist is applied only after the events that came before it.
  let chain: Promise<unknown> = Promise.resolve()
  const enqueue = <T>(operation: () => Promise<T>, fallback: T): Promise<T> => {
    const next = chain.then(operation).catch((error: unknown) => {
      logger.error({ err: error }, 'applying a Tenant change failed unexpectedly')
      return fallback
    })
    chain = next
    return next
  }

  /** Validates a resource alone, then against the tenants served under other names. */
  const validate = (
    name: string,
    object: Resource,
  ): { ok: true; tenant: Tenant; document: ConfigDocument } | { ok: false; issues: string[] } => {
    const file = where(name)
    const {
      value,
      issues: pathIssues,
      badIndexes,
    } = resolveProviders(object, providerDirectory, file)
    const document: ConfigDocument = { file, value, locate: () => 0 }
    const others = [...served.entries()]
      .filter(([other]) => other !== name)
      .map(([, entry]) => entry.document)
    const own = new Set(providerPaths(value))
    const parseOptions = {
      env: options.env,
      jwtSecret: options.jwtSecret,
      // Only this resource's scripts are looked for: the others were checked when accepted.
      fileExists: (absolute: string) => !own.has(absolute) || isFile(absolute),
    }
    // This document last: the rules report a clash on the later of two documents.
    const result = parseConfig([...others, document], parseOptions)
    const issues = [
      ...pathIssues,
      ...(result.ok ? [] : result.issues).filter(
        (issue) => issue.file === file && !badIndexes.has(issue.path),
      ),
    ]
    if (issues.length > 0) {
      return { ok: false, issues: issues.map((issue) => withoutLineZero(formatConfigIssue(issue))) }
    }
    // The tenants served were accepted together, so a problem left is theirs, not this one's.
    const alone = result.ok ? result : parseConfig([document], parseOptions)
    const tenant = alone.ok ? alone.tenants[alone.tenants.length - 1] : undefined
    if (tenant === undefined) return { ok: false, issues: [`${file}: not read`] }
    return { ok: true, tenant, document }
  }

  const refuse = (name: string, seen: Seen, problems: string[], build: boolean): void => {
    const summary = problems.join('\n')
    const before = refused.get(name)
    refused.set(name, { resourceVersion: seen.resourceVersion, summary, build })
    if (
      before !== undefined &&
      before.resourceVersion === seen.resourceVersion &&
      before.summary === summary
    )
      return
    const current = served.get(name)
    logger.error(
      {
        tenant: name,
        namespace,
        resourceVersion: seen.resourceVersion,
        problems,
        ...(current === undefined ? {} : { serving: current.resourceVersion }),
      },
      current === undefined
        ? 'Tenant resource refused; the tenant is not served'
        : 'Tenant resource refused; still serving its last good version',
    )
  }

  /** Tries to serve the latest version of one resource; answers whether it is served. */
  const attempt = async (name: string, seen: Seen, rebuild: boolean): Promise<boolean> => {
    if (target === undefined) return false
    const current = served.get(name)
    const checked = validate(name, seen.object)
    if (!checked.ok) {
      refuse(name, seen, checked.issues, false)
      return false
    }
    // Labels, annotations or status changed, not the tenant: nothing to rebuild.
    if (!rebuild && current !== undefined && isDeepStrictEqual(current.tenant, checked.tenant)) {
      served.set(name, { ...current, resourceVersion: seen.resourceVersion })
      refused.delete(name)
      return true
    }
    try {
      await target.put(checked.tenant)
    } catch (error) {
      refuse(name, seen, describeProblems(error), true)
      return false
    }
    served.set(name, {
      resourceVersion: seen.resourceVersion,
      document: checked.document,
      tenant: checked.tenant,
    })
    refused.delete(name)
    if (!rebuild || current === undefined) {
      logger.info(
        {
          tenant: name,
          namespace,
          resourceVersion: seen.resourceVersion,
          hosts: checked.tenant.hosts,
        },
        current === undefined ? 'Tenant added' : 'Tenant changed',
      )
    }
    return true
  }

  /**
   * Brings the served tenants to the latest resources. Oldest resources first, so that of two
   * new resources claiming one host, the older wins; the ones served already keep theirs.
   * Answers whether every resource is served as it is now.
   */
  const reconcile = async (rebuild = false): Promise<boolean> => {
    let converged = true
    const order = [...desired.entries()].sort(
      ([a, x], [b, y]) =>
        (x.object.metadata.creationTimestamp ?? '').localeCompare(
          y.object.metadata.creationTimestamp ?? '',
        ) || a.localeCompare(b),
    )
    for (const [name, seen] of order) {
      if (!rebuild && served.get(name)?.resourceVersion === seen.resourceVersion) continue
      const refusal = refused.get(name)
      // A build failure is retried on the resource's next change, a relist or SIGHUP, not on
      // every event of other tenants.
      if (!rebuild && refusal?.build === true && refusal.resourceVersion === seen.resourceVersion) {
        converged = false
        continue
      }
      if (!(await attempt(name, seen, rebuild))) converged = false
    }
    return converged
  }

  const remove = async (name: string): Promise<void> => {
    desired.delete(name)
    refused.delete(name)
    if (!served.has(name) || target === undefined) return
    await target.remove(name)
    served.delete(name)
    logger.info({ tenant: name, namespace }, 'Tenant removed')
  }

  const applySnapshot = async (items: Resource[]): Promise<void> => {
    const names = new Set(items.map((item) => item.metadata.name))
    for (const name of [...served.keys()]) if (!names.has(name)) await remove(name)
    desired.clear()
    for (const [name, refusal] of refused) {
      // A relist retries what failed to build; refusals that come back the same stay quiet.
      if (names.has(name)) refusal.build = false
      else refused.delete(name)
    }
    for (const item of items) {
      desired.set(item.metadata.name, {
        object: item,
        resourceVersion: item.metadata.resourceVersion,
      })
    }
    await reconcile()
  }

  const applyEvent = async (type: string, object: Resource): Promise<void> => {
    const { name } = object.metadata
    if (type === 'DELETED') {
      await remove(name)
    } else {
      desired.set(name, { object, resourceVersion: object.metadata.resourceVersion })
    }
    // Also after a deletion: a resource refused for a host the deleted one held may now fit.
    await reconcile()
  }

  const listTenants = async (): Promise<{ items: Resource[]; resourceVersion: string }> => {
    const signal = AbortSignal.any([closing.signal, AbortSignal.timeout(requestTimeoutMs)])
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
    const list = TenantListSchema.safeParse(body)
    if (!list.success) throw new Error('the API server answered something other than a TenantList')
    const items: Resource[] = []
    for (const raw of list.data.items ?? []) {
      // List items may leave out apiVersion and kind; the resource schema wants them.
      const item = ResourceSchema.safeParse(
        typeof raw === 'object' && raw !== null
          ? { apiVersion: `${TENANT_GROUP}/${TENANT_VERSION}`, kind: 'Tenant', ...raw }
          : raw,
      )
      if (item.success) items.push(item.data)
      else logger.warn({ namespace }, 'ignoring a listed Tenant without metadata.name')
    }
    return { items, resourceVersion: list.data.metadata.resourceVersion }
  }

  /** One watch connection from `resourceVersion`; `onEvent` sees each change in order. */
  const watchOnce = (
    resourceVersion: string,
    onEvent: (type: string, object: Resource) => void,
  ): Promise<WatchOutcome> =>
    new Promise((settle) => {
      const started = Date.now()
      let events = 0
      let finished = false
      let controller: AbortController | undefined
      const timeoutSeconds = options.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 60)
      const finish = (outcome: Omit<WatchOutcome, 'events' | 'durationMs'>): void => {
        if (finished) return
        finished = true
        clearTimeout(guard)
        cancelWatch = undefined
        controller?.abort()
        settle({ ...outcome, events, durationMs: Date.now() - started })
      }
      // The API server ends the watch after timeoutSeconds; one still open well after that is
      // a half-open connection that would never deliver anything again.
      const guard = setTimeout(
        () => finish({ gone: false, error: 'the watch outlived its timeout' }),
        (timeoutSeconds + 30) * 1000,
      )
      guard.unref()
      cancelWatch = () => finish({ gone: false, cancelled: true })
      const query = { resourceVersion, allowWatchBookmarks: true, timeoutSeconds }
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
        const version = object.data.metadata.resourceVersion
        if (type === 'BOOKMARK') {
          if (version !== undefined) onEvent(type, object.data)
          return
        }
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return
        events++
        onEvent(type, object.data)
      }
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

  /** Waits before a retry; `close` (and a reload) cut the wait short. */
  const pause = (ms: number): Promise<void> =>
    new Promise((done) => {
      const timer = setTimeout(() => {
        wake = undefined
        done()
      }, ms)
      wake = () => {
        clearTimeout(timer)
        wake = undefined
        done()
      }
    })
  const backoff = (failures: number): number => {
    const ms = Math.min(retry.maxMs, retry.initialMs * 2 ** Math.max(0, failures - 1))
    // ±20 %: replicas that lost the API server together do not come back in step.
    return Math.round(ms * (0.8 + Math.random() * 0.4))
  }

  let firstLoad: { resolve: () => void; reject: (error: Error) => void } | undefined
  let forceRelist = false

  /** List, then watch from the list's resourceVersion; relist on 410; never throws. */
  const run = async (): Promise<void> => {
    let resourceVersion: string | undefined
    let failures = 0
    while (!closed) {
      if (forceRelist) {
        forceRelist = false
        resourceVersion = undefined
      }
      if (resourceVersion === undefined) {
        let list: Awaited<ReturnType<typeof listTenants>>
        try {
          list = await listTenants()
        } catch (error) {
          if (closed) break
          failures++
          const waitMs = backoff(failures)
          const reason = describeError(error)
          const fields = { namespace, reason, retryInMs: waitMs, ...hint(error, namespace) }
          if (isLoaded) logger.warn(fields, 'listing Tenant resources failed; retrying')
          else logger.error(fields, 'listing Tenant resources failed; not ready, retrying')
          await pause(waitMs)
          continue
        }
        await enqueue(() => applySnapshot(list.items), undefined)
        resourceVersion = list.resourceVersion
        if (!isLoaded) {
          isLoaded = true
          logger.info(
            { namespace, resources: list.items.length, tenants: [...served.keys()] },
            'Tenant resources loaded',
          )
          firstLoad?.resolve()
        } else {
          logger.info({ namespace, resources: list.items.length }, 'Tenant resources listed again')
        }
      }
      // A reload that came during the list wants a list of its own.
      if (forceRelist || closed) continue
      let latest: string = resourceVersion
      const outcome = await watchOnce(resourceVersion, (type, object) => {
        if (object.metadata.resourceVersion !== undefined) latest = object.metadata.resourceVersion
        if (type !== 'BOOKMARK') void enqueue(() => applyEvent(type, object), undefined)
      })
      resourceVersion = latest
      if (closed) break
      if (outcome.cancelled === true) continue
      const healthy = outcome.events > 0 || outcome.durationMs >= HEALTHY_WATCH_MS
      failures = healthy ? 0 : failures + 1
      if (outcome.gone) {
        logger.info({ namespace }, 'Tenant watch expired (410 Gone); listing again')
        resourceVersion = undefined
      } else if (outcome.error !== undefined) {
        logger.warn({ namespace, reason: outcome.error }, 'Tenant watch failed; reconnecting')
      }
      // A clean end after a healthy watch (the server-side timeout) resumes at once; anything
      // else waits, so that a server that keeps failing is not hammered.
      if (!healthy || outcome.error !== undefined) await pause(backoff(Math.max(1, failures)))
    }
  }

  return {
    listenBeforeLoaded: true,
    start(to) {
      target = to
      const loadedOnce = new Promise<void>((resolveLoad, rejectLoad) => {
        firstLoad = { resolve: resolveLoad, reject: rejectLoad }
      })
      run().catch((error: unknown) => {
        logger.error({ err: error }, 'the Tenant watch loop stopped unexpectedly')
      })
      if (options.watchProviders) {
        stopWatchingProviders = watchPath(
          providerDirectory,
          () => void reload(),
          logger,
          'provider directory',
        )
      }
      return loadedOnce
    },
    loaded: () => isLoaded,
    reload,
    async close() {
      closed = true
      closing.abort()
      cancelWatch?.()
      wake?.()
      stopWatchingProviders?.()
      firstLoad?.reject(new Error('the kubernetes source was closed before the first list'))
      await chain
    },
  }

  /**
   * SIGHUP, or a change in the provider directory: rebuild every tenant (fresh provider scripts)
   * one by one, each keeping its last good version on failure, and list again.
   */
  function reload(): Promise<boolean> {
    if (!isLoaded || closed) return Promise.resolve(false)
    forceRelist = true
    cancelWatch?.()
    wake?.()
    return enqueue(async () => {
      const converged = await reconcile(true)
      logger.info(
        { namespace, tenants: [...served.keys()], refused: [...refused.keys()] },
        'Tenants reloaded',
      )
      return converged
    }, false)
  }
}

/**
 * Makes `spec.providers` absolute under `directory`. Entries that are absolute or lead out of it
 * are reported, and parseConfig's own issues at those paths are then left out.
 */
function resolveProviders(
  object: Resource,
  directory: string,
  file: string,
): { value: Record<string, unknown>; issues: ConfigIssue[]; badIndexes: Set<string> } {
  const value = structuredClone(object) as Record<string, unknown>
  const issues: ConfigIssue[] = []
  const badIndexes = new Set<string>()
  const spec = value.spec
  if (typeof spec !== 'object' || spec === null) return { value, issues, badIndexes }
  const providers = (spec as Record<string, unknown>).providers
  if (!Array.isArray(providers)) return { value, issues, badIndexes }
  providers.forEach((provider: unknown, index) => {
    if (typeof provider !== 'string' || provider === '') return
    const absolute = resolve(directory, provider)
    const inside = relative(directory, absolute)
    const path = `spec.providers.${index}`
    if (isAbsolute(provider) || inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      issues.push({
        file,
        line: 0,
        path,
        message: 'must be a relative path inside the provider directory (TESSERA_CONFIG)',
      })
      badIndexes.add(path)
    }
    providers[index] = absolute
  })
  return { value, issues, badIndexes }
}

function providerPaths(value: Record<string, unknown>): string[] {
  const spec = value.spec as { providers?: unknown } | undefined
  return Array.isArray(spec?.providers)
    ? spec.providers.filter((p): p is string => typeof p === 'string')
    : []
}

/** The resources have no lines: `kubernetes:ns/a:0` reads better as `kubernetes:ns/a`. */
function withoutLineZero(line: string): string {
  return line.replace(/(kubernetes:[^\s:()]+\/[^\s:()]+):0\b/g, '$1')
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false
}

function checkProviderDirectory(directory: string): void {
  if (statSync(directory, { throwIfNoEntry: false })?.isDirectory() === true) return
  throw new ConfigError([
    {
      file: 'environment',
      line: 0,
      path: 'TESSERA_CONFIG',
      message: `with TESSERA_CONFIG_SOURCE=kubernetes, must be the directory of the provider scripts (${directory} is not a directory)`,
    },
  ])
}

function statusCodeOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code
  const { statusCode } = error as { statusCode?: unknown }
  return typeof statusCode === 'number' ? statusCode : undefined
}

function describeStatus(status: z.infer<typeof StatusSchema>): string {
  const code = status.code === undefined ? '' : `HTTP ${status.code}`
  const text = status.message ?? status.reason ?? 'error event'
  return code === '' ? text : `${code}: ${text}`
}

/** One line about a failed request; never headers or bodies beyond the Status message. */
function describeError(error: unknown): string {
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
function hint(error: unknown, namespace: string): { hint?: string } {
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
