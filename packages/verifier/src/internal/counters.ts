import type { Algorithm, VerifierStats } from '../options.js'
import type { VerifierErrorCode } from '../errors.js'

/** The mutable counters behind {@link VerifierStats}. */
export interface Counters {
  jwksFetches: number
  jwksFetchFailures: number
  staleKeysServed: number
  unknownKids: number
  accepted: Record<Algorithm, number>
  rejected: Map<VerifierErrorCode, number>
  tokenCacheHits: number
}

/** Fresh counters, all zero. */
export function createCounters(): Counters {
  return {
    jwksFetches: 0,
    jwksFetchFailures: 0,
    staleKeysServed: 0,
    unknownKids: 0,
    accepted: { HS256: 0, RS256: 0 },
    rejected: new Map(),
    tokenCacheHits: 0,
  }
}

/** A copy of the counters that later verifications do not change. */
export function snapshot(counters: Counters): VerifierStats {
  return {
    jwksFetches: counters.jwksFetches,
    jwksFetchFailures: counters.jwksFetchFailures,
    staleKeysServed: counters.staleKeysServed,
    unknownKids: counters.unknownKids,
    accepted: { ...counters.accepted },
    rejected: Object.fromEntries(counters.rejected),
    tokenCacheHits: counters.tokenCacheHits,
  }
}
