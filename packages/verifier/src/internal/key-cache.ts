import { performance } from 'node:perf_hooks'
import { importJWK } from 'jose'
import type { KeyLike } from 'jose'
import { VerifierError } from '../errors.js'
import type { FetchLike, VerifierEvent } from '../options.js'
import { defaultFetch } from './default-fetch.js'
import { fetchJwksDocument } from './fetch-jwks.js'
import { parseJwks } from './jwks.js'
import type { Counters } from './counters.js'

/** What one issuer's key cache needs from the verifier. */
export interface KeyCacheSettings {
  issuer: string
  uri: string
  cacheMaxAge: number
  cooldown: number
  timeout: number
  maxStale: number
  fetch: FetchLike | undefined
  now: () => number
  emit: (event: VerifierEvent) => void
  counters: Counters
}

interface CachedKey {
  key: KeyLike
  /** `n.e`: a refetched set reuses the imported key when the material is unchanged. */
  material: string
}

// Refresh in the background once this fraction of cacheMaxAge has passed, so that under steady
// traffic no request ever waits for a fetch.
const REFRESH_AHEAD_AT = 0.9

/**
 * The RS256 keys of one issuer: fetched from its configured JWKS URL, fresh for `cacheMaxAge`,
 * refreshed ahead of expiry in the background, refetched on an unknown `kid` at most once per
 * `cooldown` (one request in flight, shared by all callers), and served stale for up to
 * `maxStale` past `cacheMaxAge` while the issuer cannot be reached. Keys are therefore cached
 * per (issuer, kid): a `kid` of another issuer never matches here.
 */
export class IssuerKeyCache {
  readonly #settings: KeyCacheSettings
  #keys: Map<string, CachedKey> | undefined
  #fetchedAt = 0
  #attemptedAt: number | undefined
  #lastFailed = false
  #inflight: Promise<void> | undefined

  constructor(settings: KeyCacheSettings) {
    this.#settings = settings
  }

  /**
   * The key of `kid` when the cached set is fresh at `now`, without any I/O, else `undefined`.
   * Starts a background refresh when the set nears the end of its freshness.
   */
  fresh(kid: string, now: number = this.#settings.now()): KeyLike | undefined {
    const { cacheMaxAge } = this.#settings
    if (this.#keys === undefined || now - this.#fetchedAt >= cacheMaxAge) return undefined
    if (now - this.#fetchedAt >= cacheMaxAge * REFRESH_AHEAD_AT && this.#mayFetch(now)) {
      void this.#refresh(now)
    }
    return this.#keys.get(kid)?.key
  }

  /**
   * The key of `kid`, fetching the JWKS when the cache is cold, stale, or lacks the `kid` and
   * the cooldown allows. Throws `ERR_KID_UNKNOWN` or `ERR_JWKS_UNAVAILABLE`.
   */
  async get(kid: string): Promise<KeyLike> {
    const key = this.fresh(kid)
    if (key !== undefined) return key
    const now = this.#settings.now()
    const { cacheMaxAge, maxStale } = this.#settings
    const age = now - this.#fetchedAt
    // Once a refresh has failed, stale keys serve at once while the next attempts run in the
    // background: during an outage only the first requests wait for a failing fetch.
    if (this.#lastFailed && age >= cacheMaxAge && age < cacheMaxAge + maxStale) {
      const stale = this.#keys?.get(kid)
      if (stale !== undefined) {
        if (this.#mayFetch(now)) void this.#refresh(now)
        this.#settings.counters.staleKeysServed += 1
        return stale.key
      }
    }
    const isFresh = this.#keys !== undefined && age < cacheMaxAge
    const refetch = this.#inflight !== undefined || this.#mayFetch(now)
    if (isFresh) {
      this.#settings.counters.unknownKids += 1
      this.#settings.emit({ type: 'kid_unknown', issuer: this.#settings.issuer, kid, refetch })
    }
    if (refetch) await this.#refresh(now)
    return this.#lookup(kid)
  }

  #mayFetch(now: number): boolean {
    return this.#attemptedAt === undefined || now - this.#attemptedAt >= this.#settings.cooldown
  }

  #lookup(kid: string): KeyLike {
    const { cacheMaxAge, maxStale, issuer } = this.#settings
    const now = this.#settings.now()
    const age = now - this.#fetchedAt
    if (this.#keys === undefined || age >= cacheMaxAge + maxStale) {
      throw this.#unavailable(now)
    }
    const cached = this.#keys.get(kid)
    if (cached !== undefined) {
      if (age >= cacheMaxAge) this.#settings.counters.staleKeysServed += 1
      return cached.key
    }
    // The set may be outdated when the last attempt to refresh it failed: the kid may well be
    // a new, valid key. That is a key outage, not the client's fault.
    if (this.#lastFailed) throw this.#unavailable(now)
    throw new VerifierError('ERR_KID_UNKNOWN', 'The token was signed with an unknown key', {
      cause: new Error(`kid ${kid} is not in the JWKS of ${issuer}`),
    })
  }

  #unavailable(now: number): VerifierError {
    const { cooldown, issuer } = this.#settings
    const next = this.#attemptedAt === undefined ? now : this.#attemptedAt + cooldown
    return new VerifierError(
      'ERR_JWKS_UNAVAILABLE',
      'The signing keys of the token issuer are unavailable',
      {
        retryAfter: Math.max(1, Math.ceil((next - now) / 1000)),
        cause: new Error(`no usable keys for ${issuer}`),
      },
    )
  }

  /** Starts a fetch unless one is in flight; callers share it. Never rejects. */
  #refresh(now: number): Promise<void> {
    if (this.#inflight === undefined) {
      this.#attemptedAt = now
      this.#inflight = this.#fetch().finally(() => {
        this.#inflight = undefined
      })
    }
    return this.#inflight
  }

  async #fetch(): Promise<void> {
    const { issuer, uri, timeout, counters, emit } = this.#settings
    const started = performance.now()
    counters.jwksFetches += 1
    try {
      const fetchImpl = this.#settings.fetch ?? defaultFetch
      const document = await fetchJwksDocument(fetchImpl, uri, timeout)
      const { keys, ignored } = parseJwks(document)
      const next = new Map<string, CachedKey>()
      let failedImports = 0
      await Promise.all(
        keys.map(async ({ kid, n, e }) => {
          const material = `${n}.${e}`
          const previous = this.#keys?.get(kid)
          if (previous?.material === material) {
            next.set(kid, previous)
            return
          }
          try {
            const key = (await importJWK({ kty: 'RSA', n, e }, 'RS256')) as KeyLike
            next.set(kid, { key, material })
          } catch {
            failedImports += 1
          }
        }),
      )
      if (next.size === 0 && keys.length > 0) throw new Error('no key of the JWK Set imports')
      this.#keys = next
      this.#fetchedAt = this.#settings.now()
      this.#lastFailed = false
      emit({
        type: 'jwks_fetch',
        issuer,
        uri,
        keys: next.size,
        ignored: ignored + failedImports,
        durationMs: performance.now() - started,
      })
    } catch (error) {
      this.#lastFailed = true
      counters.jwksFetchFailures += 1
      const reason = error instanceof Error ? error.message : 'failed'
      emit({
        type: 'jwks_fetch_failed',
        issuer,
        uri,
        reason,
        durationMs: performance.now() - started,
      })
      const age = this.#settings.now() - this.#fetchedAt
      const { cacheMaxAge, maxStale } = this.#settings
      if (this.#keys !== undefined && age >= cacheMaxAge && age < cacheMaxAge + maxStale) {
        emit({ type: 'jwks_stale', issuer, ageMs: age })
      }
    }
  }
}
