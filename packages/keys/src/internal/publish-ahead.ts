import type { StoredKey } from '../ports.js'
import { compareKids } from './kid.js'

/** The moment a key starts signing: its stored `signsFrom`, or its creation. */
export function signsFrom(key: Pick<StoredKey, 'createdAt' | 'signsFrom'>): number {
  return key.signsFrom ?? key.createdAt
}

/** Whether `a` is newer than `b`: by creation time, then by kid. */
function isNewer(a: StoredKey, b: StoredKey): boolean {
  return a.createdAt > b.createdAt || (a.createdAt === b.createdAt && compareKids(a.kid, b.kid) > 0)
}

function newest(keys: readonly StoredKey[]): StoredKey | undefined {
  let found: StoredKey | undefined
  for (const key of keys) if (found === undefined || isNewer(key, found)) found = key
  return found
}

/** What a tenant's active keys mean at one moment. */
export interface SigningState {
  /** The key that signs: the newest active key whose `signsFrom` has come. */
  signing: StoredKey | undefined
  /** The newest active key that signs later, newer than `signing`: published, not yet signing. */
  next: StoredKey | undefined
  /** Active keys that will never sign again: older than `signing`, or older than `next`. */
  superseded: StoredKey[]
}

/**
 * Works out which active key signs at `now`. A key made while another signed is published at
 * once and signs from its `signsFrom`; until then the older key goes on signing. With no active
 * key whose time has come (its predecessor was revoked, or it is the first RS256 key of a tenant
 * that signed HS256), the pending key signs at once: it is published, and nothing else may sign.
 */
export function signingState(keys: readonly StoredKey[], now: number): SigningState {
  const active = keys.filter((key) => key.state === 'active')
  const due = active.filter((key) => signsFrom(key) <= now)
  const pending = active.filter((key) => signsFrom(key) > now)
  let signing = newest(due)
  let next = newest(signing === undefined ? pending : pending.filter((k) => isNewer(k, signing!)))
  if (signing === undefined && next !== undefined) {
    signing = next
    next = undefined
  }
  const superseded = active.filter((key) => key !== signing && key !== next)
  return { signing, next, superseded }
}
