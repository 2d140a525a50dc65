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
