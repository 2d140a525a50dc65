import * as crypto from 'node:crypto'
import type { KeyLike } from 'jose'
import type { IssuerKeyCache } from './key-cache.js'

type OneShotHash = (algorithm: string, data: string, encoding: 'base64url') => string
const oneShot = (crypto as { hash?: OneShotHash }).hash

/** A verified token as the cache keeps it. */
export interface CachedVerification<T> {
  result: T
  /** `exp` in ms: the entry ends then, whatever the clock tolerance. */
  expiresAt: number
  /** RS256: the issuer's key cache, kid and key that verified it; the entry dies with the key. */
  keyCache?: IssuerKeyCache | undefined
  kid?: string | undefined
  key?: KeyLike | undefined
}

/**
 * A bounded LRU of verified tokens, keyed by the SHA-256 of the token so that the cache never
 * holds a usable bearer token. A `Map` keeps insertion order: a hit is moved to the end, and
 * the first entry is the least recently used.
 */
export class TokenCache<T> {
  readonly #max: number
  readonly #entries = new Map<string, CachedVerification<T>>()
  // The key of the most recently used entry, the last in the map: a hit on it (a client
  // repeating its token) needs no move, so that the map is not rewritten on every request.
  #newest: string | undefined

  constructor(max: number) {
    this.#max = max
  }

  /** The cache key of a token. */
  static keyOf(token: string): string {
    // The one-shot crypto.hash (Node 20.12+) costs a fraction of a Hash object per call.
    return oneShot === undefined
      ? crypto.createHash('sha256').update(token).digest('base64url')
      : oneShot('sha256', token, 'base64url')
  }

  /** The entry for `key` unless it has expired by `now` (then it is dropped). */
  get(key: string, now: number): CachedVerification<T> | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      this.delete(key)
      return undefined
    }
    if (key !== this.#newest) {
      this.#entries.delete(key)
      this.#entries.set(key, entry)
      this.#newest = key
    }
    return entry
  }

  /** Stores an entry, evicting the least recently used one past the bound. */
  set(key: string, entry: CachedVerification<T>): void {
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    this.#newest = key
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.delete(oldest.value)
    }
  }

  /** Drops an entry. */
  delete(key: string): void {
    this.#entries.delete(key)
    if (key === this.#newest) this.#newest = undefined
  }

  /** The number of entries. */
  get size(): number {
    return this.#entries.size
  }
}
