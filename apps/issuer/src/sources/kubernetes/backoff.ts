/**
 * How the `kubernetes` source waits between attempts at the API server: exponential backoff
 * with jitter, reset by a healthy watch, and a wait that a reload or close can cut short.
 *
 * @module
 */

/** How the source retries; the defaults suit a cluster (client-go waits 0.8 s to 30 s). */
export interface KubernetesRetryOptions {
  /** First wait after a failure, doubled on each failure in a row (default 500). */
  initialMs: number
  /** Longest wait (default 30 000). */
  maxMs: number
}

export const DEFAULT_RETRY: KubernetesRetryOptions = { initialMs: 500, maxMs: 30_000 }

/** A watch that delivered events, or stayed open this long, was healthy: no backoff after it. */
export const HEALTHY_WATCH_MS = 5_000

/**
 * The wait before the next attempt after `failures` failures in a row: `initialMs` doubled per
 * failure after the first, capped at `maxMs`, then ±20 % so that replicas that lost the API
 * server together do not come back in step. `random` is `Math.random` outside tests.
 */
export function backoffMs(
  failures: number,
  retry: KubernetesRetryOptions,
  random: () => number = Math.random,
): number {
  const ms = Math.min(retry.maxMs, retry.initialMs * 2 ** Math.max(0, failures - 1))
  return Math.round(ms * (0.8 + random() * 0.4))
}

/** How one watch connection went, as far as retrying cares. */
export interface WatchResult {
  events: number
  durationMs: number
  /** Why it ended abnormally, if it did. */
  error?: string
}

/**
 * After a watch ends: the failures in a row from now on, and whether to wait before the next
 * attempt. A clean end after a healthy watch (the server-side timeout) resumes at once; anything
 * else waits, so that a server that keeps failing is not hammered.
 */
export function afterWatch(
  result: WatchResult,
  failures: number,
): { failures: number; wait: boolean } {
  const healthy = result.events > 0 || result.durationMs >= HEALTHY_WATCH_MS
  return {
    failures: healthy ? 0 : failures + 1,
    wait: !healthy || result.error !== undefined,
  }
}

/** A wait that `wake` ends early: a reload wants to list now, and close wants no timer left. */
export interface Pause {
  wait(ms: number): Promise<void>
  /** Ends the wait under way, if any; nothing otherwise. */
  wake(): void
}

export function createPause(): Pause {
  let wakeNow: (() => void) | undefined
  return {
    wait: (ms) =>
      new Promise((done) => {
        const timer = setTimeout(() => {
          wakeNow = undefined
          done()
        }, ms)
        wakeNow = () => {
          clearTimeout(timer)
          wakeNow = undefined
          done()
        }
      }),
    wake: () => wakeNow?.(),
  }
}
