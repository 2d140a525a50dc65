/**
 * The `kubernetes` source: `tenants.tessera.dev/v1` resources of one namespace, listed once and
 * then watched, each tenant validated and served on its own. The parts live in `kubernetes/`:
 * the list/watch client, the tenant set (validation against the served tenants' claims, builds
 * in batches, last good version kept), backoff, and where the API server is found.
 *
 * @module
 */
import { resolve } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
import { ConfigError } from '@tessera/config-schema'
import type { ConfigIssue } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { afterWatch, backoffMs, createPause, DEFAULT_RETRY } from './kubernetes/backoff.js'
import type { KubernetesRetryOptions } from './kubernetes/backoff.js'
import { createTenantClient, describeError, hint } from './kubernetes/client.js'
import type { TenantList } from './kubernetes/client.js'
import { loadKubeConfig } from './kubernetes/kubeconfig.js'
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
  const pause = createPause()
  let isLoaded = false
  let closed = false
  let forceRelist = false
  let cancelWatch: (() => void) | undefined
  let stopWatchingProviders: (() => void) | undefined
  let firstLoad: { resolve: () => void; reject: (error: Error) => void } | undefined

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
        let list: TenantList
        try {
          list = await client.list()
        } catch (error) {
          if (closed) break
          failures++
          const waitMs = backoffMs(failures, retry)
          const reason = describeError(error)
          const fields = { namespace, reason, retryInMs: waitMs, ...hint(error, namespace) }
          if (isLoaded) logger.warn(fields, 'listing Tenant resources failed; retrying')
          else logger.error(fields, 'listing Tenant resources failed; not ready, retrying')
          await pause.wait(waitMs)
          continue
        }
        await tenants.applyList(list.items)
        resourceVersion = list.resourceVersion
        if (!isLoaded) {
          isLoaded = true
          logger.info(
            { namespace, resources: list.items.length, tenants: tenants.served() },
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
      const watch = client.watch(resourceVersion, (type, object) => {
        if (object.metadata.resourceVersion !== undefined) latest = object.metadata.resourceVersion
        if (type !== 'BOOKMARK') void tenants.applyEvent(type, object)
      })
      cancelWatch = watch.cancel
      const outcome = await watch.outcome
      cancelWatch = undefined
      resourceVersion = latest
      if (closed) break
      if (outcome.cancelled === true) continue
      const next = afterWatch(outcome, failures)
      failures = next.failures
      if (outcome.gone) {
        logger.info({ namespace }, 'Tenant watch expired (410 Gone); listing again')
        resourceVersion = undefined
      } else if (outcome.error !== undefined) {
        logger.warn({ namespace, reason: outcome.error }, 'Tenant watch failed; reconnecting')
      }
      if (next.wait) await pause.wait(backoffMs(Math.max(1, failures), retry))
    }
  }

  /**
   * SIGHUP, or a change in the provider directory: rebuild every tenant (fresh provider scripts)
   * one by one, each keeping its last good version on failure, and list again.
   */
  const reload = (): Promise<boolean> => {
    if (!isLoaded || closed) return Promise.resolve(false)
    forceRelist = true
    cancelWatch?.()
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
      pause.wake()
      stopWatchingProviders?.()
      firstLoad?.reject(new Error('the kubernetes source was closed before the first list'))
      await tenants.settled()
    },
  }
}
