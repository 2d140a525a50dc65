/**
 * The list/watch loop of the `kubernetes` source: list, then watch from the list's
 * resourceVersion, relist on 410 Gone, back off on failures. Never throws.
 *
 * @module
 */
import type { Logger } from 'pino'
import { afterWatch, backoffMs } from './backoff.js'
import type { KubernetesRetryOptions, Pause } from './backoff.js'
import { describeError, hint } from './client.js'
import type { TenantClient, TenantList } from './client.js'
import type { TenantSet } from './tenants.js'

/** What the loop uses. */
export interface ListWatchParts {
  client: TenantClient
  tenants: TenantSet
  pause: Pause
  retry: KubernetesRetryOptions
  namespace: string
  logger: Logger
}

/** What the loop and its source share: read and written by both. */
export interface ListWatchState {
  /** The first list is applied. */
  loaded: boolean
  closed: boolean
  /** A reload asks for a list of its own. */
  forceRelist: boolean
  /** Ends the watch running, if any. */
  cancelWatch: (() => void) | undefined
  /** Called once the first list is applied. */
  onFirstLoad: () => void
}

/** List, then watch from the list's resourceVersion; relist on 410; never throws. */
export async function listAndWatch(parts: ListWatchParts, state: ListWatchState): Promise<void> {
  const { client, tenants, pause, retry, namespace, logger } = parts
  let resourceVersion: string | undefined
  let failures = 0
  while (!state.closed) {
    if (state.forceRelist) {
      state.forceRelist = false
      resourceVersion = undefined
    }
    if (resourceVersion === undefined) {
      let list: TenantList
      try {
        list = await client.list()
      } catch (error) {
        if (state.closed) break
        failures++
        const waitMs = backoffMs(failures, retry)
        const reason = describeError(error)
        const fields = { namespace, reason, retryInMs: waitMs, ...hint(error, namespace) }
        if (state.loaded) logger.warn(fields, 'listing Tenant resources failed; retrying')
        else logger.error(fields, 'listing Tenant resources failed; not ready, retrying')
        await pause.wait(waitMs)
        continue
      }
      await tenants.applyList(list.items)
      resourceVersion = list.resourceVersion
      if (!state.loaded) {
        state.loaded = true
        logger.info(
          { namespace, resources: list.items.length, tenants: tenants.served() },
          'Tenant resources loaded',
        )
        state.onFirstLoad()
      } else {
        logger.info({ namespace, resources: list.items.length }, 'Tenant resources listed again')
      }
    }
    // A reload that came during the list wants a list of its own.
    if (state.forceRelist || state.closed) continue
    let latest: string = resourceVersion
    const watch = client.watch(resourceVersion, (type, object) => {
      if (object.metadata.resourceVersion !== undefined) latest = object.metadata.resourceVersion
      if (type !== 'BOOKMARK') void tenants.applyEvent(type, object)
    })
    state.cancelWatch = watch.cancel
    const outcome = await watch.outcome
    state.cancelWatch = undefined
    resourceVersion = latest
    if (state.closed) break
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
