import type { VerifierStats } from '../options.js'
import type { VerifiedToken, Verifier } from '../verifier.js'
import { snapshot } from './counters.js'
import type { ResolvedOptions } from './options.js'
import { TokenCache } from './token-cache.js'
import type { CompactSegments } from './token.js'
import { createDpopChecker } from './dpop.js'
import type { DpopChecker } from './dpop.js'
import { createEngineParts, reject, verifyUncached } from './verification.js'
import type { EngineParts } from './verification.js'

/**
 * The verification behind a {@link Verifier}, in the steps the adapters take one by one: a
 * token is hashed once, a token cache hit is answered without a turn of the event loop, and the
 * token's shape is checked once, not by the adapter and the verifier each.
 */
export interface Engine {
  /** The configured issuers. */
  readonly issuers: readonly string[]
  /** A snapshot of the counters. */
  readonly stats: () => VerifierStats
  /** The DPoP checks, with the `dpop` option; `undefined` without it. */
  readonly dpop: DpopChecker | undefined
  /**
   * Counts and reports a refusal made outside the engine's own verification: a token's binding
   * or its DPoP proof.
   */
  readonly refused: (error: unknown) => void
  /** {@link Verifier.verify}: the token cache, then {@link Engine.verifyUncached} on a miss. */
  readonly verify: (token: string) => Promise<VerifiedToken>
  /**
   * The token cache key of `token`; `undefined` without a token cache, or for what is not a
   * string or is longer than `maxTokenLength` (never hashed: the verification refuses it).
   */
  cacheKeyOf(token: string): string | undefined
  /**
   * The cached verification of the token with this key, counted as a hit (`tokenCacheHits` and
   * `accepted`), or `undefined`: never cached, expired, or its key gone from the issuer's fresh
   * JWKS. Never throws; on a miss, {@link Engine.verifyUncached} decides and reports.
   */
  cachedResult(cacheKey: string): VerifiedToken | undefined
  /**
   * Verifies a token that is not in the token cache, and caches the result under `cacheKey`
   * when there is one. `segments`: the token already split by `compactSegments`, or `undefined`
   * to have it split and its shape checked here. Everything refused is counted and reported,
   * once, and rejects with a {@link VerifierError}.
   */
  verifyUncached(
    token: string,
    cacheKey: string | undefined,
    segments: CompactSegments | undefined,
  ): Promise<VerifiedToken>
}

const ENGINE: unique symbol = Symbol('@tessera/verifier engine')

/** A verifier made by {@link verifierOf}, carrying its engine under a key of this module. */
type WithEngine = Verifier & { readonly [ENGINE]?: Engine }

/**
 * The public face of an engine. The engine rides along under a symbol, invisible to
 * `Object.keys` and JSON, for {@link engineOf}.
 */
export function verifierOf(engine: Engine): Verifier {
  const verifier: WithEngine = {
    issuers: engine.issuers,
    stats: engine.stats,
    verify: engine.verify,
    [ENGINE]: engine,
  }
  return verifier
}

/** The engine of a verifier made by `createVerifier`; `undefined` for any other object. */
export function engineOf(verifier: Verifier): Engine | undefined {
  return (verifier as WithEngine)[ENGINE]
}

/** {@link Engine.cachedResult} over an engine's parts. */
function cachedResult(parts: EngineParts, cacheKey: string): VerifiedToken | undefined {
  const { tokenCache, counters } = parts
  if (tokenCache === undefined) return undefined
  let nowMs: number
  try {
    nowMs = parts.now()
  } catch {
    // A clock that throws: the verification that follows the miss reports it.
    return undefined
  }
  const entry = tokenCache.get(cacheKey, nowMs)
  if (entry === undefined) return undefined
  // An RS256 entry lives only as long as its key stays in a fresh copy of the issuer's JWKS.
  if (
    entry.keyCache !== undefined &&
    entry.keyCache.fresh(entry.kid as string, nowMs) !== entry.key
  ) {
    tokenCache.delete(cacheKey)
    return undefined
  }
  counters.tokenCacheHits += 1
  counters.accepted[entry.result.protectedHeader.alg] += 1
  return entry.result
}

/** An engine for options already checked by `resolveOptions`. */
export function createEngine(settings: ResolvedOptions): Engine {
  const parts = createEngineParts(settings)
  const { maxTokenLength, tokenCache } = parts
  const cacheKeyOf = (token: string): string | undefined =>
    tokenCache === undefined || typeof token !== 'string' || token.length > maxTokenLength
      ? undefined
      : TokenCache.keyOf(token)
  return {
    issuers: [...settings.issuers],
    stats: () => snapshot(parts.counters),
    dpop:
      settings.dpop === undefined
        ? undefined
        : createDpopChecker(settings.dpop, {
            now: settings.now,
            clockTolerance: settings.clockTolerance,
          }),
    refused: (error) => {
      reject(parts, error, undefined)
    },
    verify: (token) => {
      const cacheKey = cacheKeyOf(token)
      if (cacheKey !== undefined) {
        const hit = cachedResult(parts, cacheKey)
        if (hit !== undefined) return Promise.resolve(hit)
      }
      return verifyUncached(parts, token, cacheKey, undefined)
    },
    cacheKeyOf,
    cachedResult: (cacheKey) => cachedResult(parts, cacheKey),
    verifyUncached: (token, cacheKey, segments) => verifyUncached(parts, token, cacheKey, segments),
  }
}
