/**
 * The `kubernetes` source: `tenants.tessera.dev/v1` resources of one namespace, listed once and
 * then watched, each tenant validated and served on its own. The parts live in `kubernetes/`:
 * the list/watch client and loop, the tenant set (validation against the served tenants' claims,
 * builds in batches, last good version kept), backoff, and where the API server is found.
 *
 * @module
 */
import { resolve } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
import { ConfigError } from '@tessera/config-schema'
import type { ConfigIssue } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { createPause, DEFAULT_RETRY } from './kubernetes/backoff.js'
import type { KubernetesRetryOptions } from './kubernetes/backoff.js'
import { createTenantClient } from './kubernetes/client.js'
import { loadKubeConfig } from './kubernetes/kubeconfig.js'
import { listAndWatch } from './kubernetes/list-watch.js'
import type { ListWatchState } from './kubernetes/list-watch.js'
import { createTenantSet } from './kubernetes/tenants.js'
import { checkProviderDirectory } from './kubernetes/validate.js'
import type { TenantSource } from './source.js'
import { watchPath } from './watch-path.js'

export { loadKubeConfig } from './kubernetes/kubeconfig.js'
export { TENANT_GROUP, TENANT_PLURAL, TENANT_VERSION } from './kubernetes/resources.js'
export type { KubernetesRetryOptions } from './kubernetes/backoff.js'

export interface KubernetesSourceOptions {
  /** TESSERA_KUBERNETES_NAMESPACE: whose Tenant resources are served. */
  namespace: string
  /** TESSERA_CONFIG: the directory that `spec.providers` paths resolve against. */
  providerDirectory: string
  /** Environment for `{env: VAR}` references. */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting. */
  jwtSecret: string | undefined
  /** Takes client secrets shorter than 16 characters instead of refusing them (dev warns). */
  shortClientSecrets?: ((issue: ConfigIssue) => void) | undefined
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

/**
 * Lists and watches the Tenant resources of `namespace` and serves each valid one.
 *
 * - Each resource is validated alone with config-schema's `parseConfigDocument` (issues name it
 *   `kubernetes:NAMESPACE/NAME`), then against an index of what the tenants already served claim
 *   (hosts and client_ids are unique), in time proportional to the resource. A refused resource
 *   is logged with every problem; the last good version of that tenant keeps serving, or it
 *   stays absent, and no other tenant is touched.
 * - The tenants of a list (thousands at start-up) are built in batches; a batch that fails is
 *   split until the tenant that cannot be built is found.
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
  const retry: KubernetesRetryOptions = { ...DEFAULT_RETRY, ...options.retry }

  const closing = new AbortController()
  const client = createTenantClient({
    kubeConfig,
    namespace,
    logger,
    signal: closing.signal,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    ...(options.watchTimeoutSeconds === undefined
      ? {}
      : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
  })
  const tenants = createTenantSet({
    namespace,
    logger,
    providerDirectory,
    env: options.env,
    jwtSecret: options.jwtSecret,
    shortClientSecrets: options.shortClientSecrets,
  })
  let firstLoad: { resolve: () => void; reject: (error: Error) => void } | undefined
  const state: ListWatchState = {
    loaded: false,
    closed: false,
    forceRelist: false,
    cancelWatch: undefined,
    onFirstLoad: () => firstLoad?.resolve(),
  }
  const pause = createPause()
  let stopWatchingProviders: (() => void) | undefined

  /**
   * SIGHUP, or a change in the provider directory: rebuild every tenant (fresh provider scripts)
   * one by one, each keeping its last good version on failure, and list again.
   */
  const reload = (): Promise<boolean> => {
    if (!state.loaded || state.closed) return Promise.resolve(false)
    state.forceRelist = true
    state.cancelWatch?.()
    pause.wake()
    return tenants.rebuildAll()
  }

  return {
    listenBeforeLoaded: true,
    start(to) {
      tenants.attach(to)
      const loadedOnce = new Promise<void>((resolveLoad, rejectLoad) => {
        firstLoad = { resolve: resolveLoad, reject: rejectLoad }
      })
      listAndWatch({ client, tenants, pause, retry, namespace, logger }, state).catch(
        (error: unknown) => {
          logger.error({ err: error }, 'the Tenant watch loop stopped unexpectedly')
        },
      )
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
    loaded: () => state.loaded,
    reload,
    async close() {
      state.closed = true
      closing.abort()
      state.cancelWatch?.()
      pause.wake()
      stopWatchingProviders?.()
      firstLoad?.reject(new Error('the kubernetes source was closed before the first list'))
      await tenants.settled()
    },
  }
}
