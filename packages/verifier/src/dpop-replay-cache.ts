import { VerifierError } from './errors.js'

/**
 * Where a verifier remembers the `jti` of the DPoP proofs it accepted, so that each proof is
 * accepted once (RFC 9449 §11.1). One atomic call: `add` records `jti` until `expiresAt` and
 * resolves to `true` when the `jti` was new, `false` when it was already there (a replay). A
 * rejection (or a throw) refuses the request with 503, as the proof cannot be checked.
 *
 * Redis gives exactly this with `SET key 1 NX PXAT expiresAt`:
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect()
 * const replayCache: DpopReplayCache = {
 *   // 'OK' when the key was set, null when it existed: true for a new jti only.
 *   add: async (jti, expiresAt) =>
 *     (await redis.set(`dpop:orders-api:${jti}`, '1', { NX: true, PXAT: expiresAt })) === 'OK',
 * }
 * ```
 * @see RFC 9449 §11.1 (DPoP Proof Replay)
 */
export interface DpopReplayCache {
  /**
   * Records `jti` until `expiresAt` (ms since the epoch: the proof's `iat` plus `dpop.maxAge`
   * plus `clockTolerance`, after which the proof is refused as too old anyway). `true` when the
   * `jti` was not recorded before, `false` for a replay.
   */
  add(jti: string, expiresAt: number): Promise<boolean> | boolean
}

/** Options of {@link createMemoryReplayCache}. */
export interface MemoryReplayCacheOptions {
  /** The most `jti`s remembered at once. Default 100_000 (about 15 MB). */
  max?: number | undefined
  /** The clock, in ms since the epoch. Default `Date.now`. */
  now?: (() => number) | undefined
}

/** The default bound of a memory replay cache. */
export const DEFAULT_REPLAY_CACHE_MAX = 100_000

/**
 * A {@link DpopReplayCache} in this process's memory: the default of a verifier with `dpop`.
 * Bounded by `max`: when full, expired entries are dropped first; when none has expired, `add`
 * throws `ERR_REPLAY_CACHE_UNAVAILABLE` (a 503 with `Retry-After` until the oldest entry
 * expires) rather than forget a `jti` that could then be replayed. The bound allows `max`
 * proofs per window (`dpop.maxAge` + `clockTolerance`): 100_000 per 65 s is about 1,500 new
 * proofs a second, sustained.
 *
 * Each instance of an API with its own memory cache accepts a proof once per instance: behind a
 * load balancer, a captured proof can be replayed once on each other instance within the
 * window. Share one cache (see {@link DpopReplayCache}) to accept it once in all.
 *
 * @example
 * ```ts
 * const memory = createMemoryReplayCache({ max: 500_000 })
 * const verifier = createVerifier({ issuer, dpop: { replayCache: memory } })
 * ```
 */
export function createMemoryReplayCache(options: MemoryReplayCacheOptions = {}): DpopReplayCache {
  const max = options.max ?? DEFAULT_REPLAY_CACHE_MAX
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new TypeError('createMemoryReplayCache: options.max must be a positive integer')
  }
  const now = options.now ?? Date.now
  if (typeof now !== 'function') {
    throw new TypeError('createMemoryReplayCache: options.now must be a function')
  }
  // jti → expiresAt, in insertion order, which is nearly expiry order: proofs arrive about when
  // they are made, and every entry lives for the same window.
  const entries = new Map<string, number>()
  // No entry expires before this: a full sweep before then would free nothing.
  let nextExpiry = 0

  const dropExpiredFromFront = (at: number): void => {
    for (const [jti, expiresAt] of entries) {
      if (expiresAt > at) return
      entries.delete(jti)
    }
  }
  const sweep = (at: number): void => {
    let earliest = Number.POSITIVE_INFINITY
    for (const [jti, expiresAt] of entries) {
      if (expiresAt <= at) entries.delete(jti)
      else if (expiresAt < earliest) earliest = expiresAt
    }
    nextExpiry = earliest
  }

  return {
    add(jti: string, expiresAt: number): boolean {
      const at = now()
      const known = entries.get(jti)
      if (known !== undefined && known > at) return false
      if (known !== undefined) entries.delete(jti)
      dropExpiredFromFront(at)
      if (entries.size >= max && at >= nextExpiry) sweep(at)
      if (entries.size >= max) {
        throw new VerifierError(
          'ERR_REPLAY_CACHE_UNAVAILABLE',
          'Too many DPoP proofs to remember; try again shortly',
          { retryAfter: Math.max(1, Math.ceil((nextExpiry - at) / 1000)) },
        )
      }
      entries.set(jti, expiresAt)
      // Keeps nextExpiry a lower bound of every entry's expiry, whatever order they come in.
      if (expiresAt < nextExpiry) nextExpiry = expiresAt
      return true
    },
  }
}
