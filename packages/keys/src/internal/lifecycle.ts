import type { StoredKey } from '../ports.js'
import { compareKids } from './kid.js'

/**
 * When a retired key stopped signing. A retired row without `retiredAt` is out of contract;
 * counting from its creation errs towards unpublishing it early rather than keeping it forever.
 */
export function retiredSince(key: StoredKey): number {
  return key.retiredAt ?? key.createdAt
}

/** Retired keys whose grace has run out: they are deleted, public and private parts. */
export function isPastGrace(key: StoredKey, now: number, graceMs: number): boolean {
  return key.state === 'retired' && retiredSince(key) + graceMs <= now
}

/** The key that signs: the newest active one, by creation time and then by kid. */
export function newestActive(keys: readonly StoredKey[]): StoredKey | undefined {
  let newest: StoredKey | undefined
  for (const key of keys) {
    if (key.state !== 'active') continue
    if (
      newest === undefined ||
      key.createdAt > newest.createdAt ||
      (key.createdAt === newest.createdAt && compareKids(key.kid, newest.kid) > 0)
    ) {
      newest = key
    }
  }
  return newest
}

/**
 * How far apart the retirement of one key and the creation of the next may be for both to count
 * as one RS256 period. A rotation stamps both with the same clock reading; replicas that race
 * to rotate differ by their clock skew and a round trip. A longer gap is a time without an
 * active key: the tenant was rolled back to HS256. Erring long only moves the start earlier.
 */
const PERIOD_JOIN_MS = 60_000

/**
 * The start of the tenant's current RS256 period: the creation of the oldest key in the unbroken
 * chain of keys that ends with the newest, each created no later than its predecessor retired
 * (rotations, revocations with a replacement). Undefined without keys.
 *
 * Pruning cannot make it later than it should be in a way that matters: a key is pruned a
 * grace (at least two token lifetimes) after it retired, and its successor was created then, so
 * the start found is over two lifetimes ago, and no token from before it is still unexpired.
 */
export function rs256PeriodStart(keys: readonly StoredKey[]): number | undefined {
  let start: number | undefined
  let end = -Infinity
  for (const key of [...keys].sort((a, b) => a.createdAt - b.createdAt)) {
    // A revoked key keeps the time it stopped signing; one that never stopped reaches today.
    const until = key.state === 'active' || key.retiredAt === undefined ? Infinity : key.retiredAt
    if (start === undefined || key.createdAt > end + PERIOD_JOIN_MS) start = key.createdAt
    end = Math.max(end, until)
  }
  return start
}
