/**
 * A bounded, least-recently-used cache of values that expire, whose concurrent lookups of one
 * key share one load.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http'

/** What a load yields: the value and how long it may be served from the cache. */
export interface Loaded<Value> {
  value: Value
  ttlMs: number
}

interface Entry<Value> {
  value: Promise<Value>
  /** Epoch milliseconds; undefined while the load is in flight. */
  expiresAt: number | undefined
}

/**
 * At most `maxEntries` keys; past that the least recently used goes. A load in flight is an
 * entry too: every lookup of its key until it settles waits for it rather than starting another.
 * `load` must not reject (a failure is a value, cached like any other).
 */
export class ExpiringCache<Value> {
  readonly #entries = new Map<string, Entry<Value>>()

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.#entries.size
  }

  get(key: string, load: () => Promise<Loaded<Value>>): Promise<Value> {
    const hit = this.#entries.get(key)
    if (hit !== undefined && (hit.expiresAt === undefined || hit.expiresAt > this.now())) {
      // Most recently used: to the end of the map's order.
      this.#entries.delete(key)
      this.#entries.set(key, hit)
      return hit.value
    }
    const entry: Entry<Value> = { value: Promise.resolve(undefined as Value), expiresAt: undefined }
    entry.value = load().then(
      (loaded) => {
        entry.expiresAt = this.now() + loaded.ttlMs
        return loaded.value
      },
      (error: unknown) => {
        // Not cached: the next lookup loads afresh.
        if (this.#entries.get(key) === entry) this.#entries.delete(key)
        throw error
      },
    )
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string
      this.#entries.delete(oldest)
    }
    return entry.value
  }
}

/** Bounds of how long a fetched document is used, whatever its cache headers say. */
export interface FreshnessBounds {
  minMs: number
  maxMs: number
}

/**
 * How long a response may be used, per its cache headers (RFC 9111 §4.2.1): `Cache-Control`
 * `max-age` less `Age`, else `Expires` less `Date`; `no-store` and `no-cache` mean 0. Clamped
 * to `bounds`: below the minimum a document would be fetched at every request, and past the
 * maximum a changed document would never be seen. No header at all means the minimum.
 */
export function freshnessMs(
  headers: IncomingHttpHeaders,
  now: number,
  bounds: FreshnessBounds,
): number {
  const clamp = (ms: number) => Math.min(bounds.maxMs, Math.max(bounds.minMs, ms))
  const directives = (headers['cache-control'] ?? '')
    .toLowerCase()
    .split(',')
    .map((directive) => directive.trim())
  if (directives.some((d) => d === 'no-store' || d === 'no-cache' || d.startsWith('no-cache='))) {
    return clamp(0)
  }
  const maxAge = directives
    .map((directive) => /^max-age\s*=\s*"?(\d+)"?$/.exec(directive)?.[1])
    .find((seconds) => seconds !== undefined)
  if (maxAge !== undefined) {
    const age = Number(/^\d+$/.test(headers.age ?? '') ? headers.age : 0)
    return clamp((Number(maxAge) - age) * 1000)
  }
  if (headers.expires !== undefined) {
    const expires = Date.parse(headers.expires)
    const date = headers.date === undefined ? NaN : Date.parse(headers.date)
    // An Expires that is no date means "already expired" (RFC 9111 §5.3).
    if (Number.isNaN(expires)) return clamp(0)
    return clamp(expires - (Number.isNaN(date) ? now : date))
  }
  return clamp(0)
}
