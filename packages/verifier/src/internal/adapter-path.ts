import type { VerifiedToken, Verifier } from '../verifier.js'

/**
 * What the adapters use of a verifier made by `createVerifier`, beyond its public face: a token
 * cache hit is answered without a turn of the event loop, a token is hashed once, and its
 * shape is checked once, not by the adapter and the verifier each.
 */
export interface AdapterPath {
  /**
   * The token cache key of `token`; `undefined` without a token cache, or when the token is
   * longer than `maxTokenLength` (such a token is never hashed: {@link AdapterPath.verify}
   * refuses it).
   */
  keyOf(token: string): string | undefined
  /**
   * The cached verification of the token with this key, counted as a hit (`tokenCacheHits` and
   * `accepted`), or `undefined`: never cached, expired, or its key gone from the issuer's fresh
   * JWKS. Never throws; on a miss, {@link AdapterPath.verify} decides and reports.
   */
  cached(cacheKey: string): VerifiedToken | undefined
  /**
   * `verify(token)` for a token whose cache key, if any, has just been looked up and missed.
   * `compact`: the caller has found the token to be three base64url segments joined by dots.
   */
  verify(token: string, cacheKey: string | undefined, compact: boolean): Promise<VerifiedToken>
}

// One entry per verifier, read when an adapter is created, not per request.
const paths = new WeakMap<Verifier, AdapterPath>()

/** Records the adapter path of a verifier (createVerifier only). */
export function registerAdapterPath(verifier: Verifier, path: AdapterPath): void {
  paths.set(verifier, path)
}

/** The adapter path of `verifier` when `createVerifier` made it; `undefined` for any other. */
export function adapterPathOf(verifier: Verifier): AdapterPath | undefined {
  return paths.get(verifier)
}
