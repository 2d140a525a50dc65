import { createJwks } from '../jwks.js'
import type { JwksDocument } from '../jwks.js'
import type { StoredKey } from '../ports.js'
import type { TokenSigner } from '../signer.js'
import { retiredSince } from './lifecycle.js'
import { signsFrom } from './publish-ahead.js'

/** What a ring keeps of its active key: not the private key, which the store holds. */
export type ActiveKey = Pick<StoredKey, 'kid' | 'createdAt'> & { signsFrom: number }

/** What a ring serves between two reads of the store. */
export interface Snapshot {
  active: ActiveKey | undefined
  /** The key that takes over from `active` at its `signsFrom`. */
  next: ActiveKey | undefined
  nextSigner: TokenSigner | undefined
  rs256Since: number | undefined
  jwks: JwksDocument
  signer: TokenSigner | undefined
  /**
   * When the next retired key leaves the JWKS, or the next key starts signing (then the store
   * retires the old one), epoch ms; Infinity when neither will.
   */
  nextExpiry: number
  /** Whether the store held any key of the tenant, in any state. */
  hadKeys: boolean
}

export function activeKeyOf(key: StoredKey): ActiveKey {
  return { kid: key.kid, createdAt: key.createdAt, signsFrom: signsFrom(key) }
}

/**
 * `snapshot` at `now`: the next key takes over at its stored instant, on every replica at once,
 * without waiting for a reload; the reload that `nextExpiry` schedules then retires the old key
 * in the store. The same object while nothing changes.
 */
export function snapshotAt(
  snapshot: Snapshot,
  now: number,
  lazySigner: (kid: string) => TokenSigner,
): Snapshot {
  const { next } = snapshot
  if (next === undefined || now < next.signsFrom) return snapshot
  return {
    ...snapshot,
    active: next,
    signer: snapshot.nextSigner ?? lazySigner(next.kid),
    next: undefined,
    nextSigner: undefined,
  }
}

/**
 * The JWKS of the kept keys at `now`: `previous` itself while nothing published changed, so
 * that caches keyed on it (the issuer's own verifier) stay warm across polls.
 */
export function publishedJwks(
  previous: JwksDocument | undefined,
  kept: readonly StoredKey[],
  now: number,
  graceMs: number,
): JwksDocument {
  const jwks = createJwks(kept, { now, graceMs })
  const same = previous !== undefined && JSON.stringify(previous) === JSON.stringify(jwks)
  return same ? previous : jwks
}

/** When the snapshot of `kept` stops being true without a store change; see {@link Snapshot}. */
export function nextExpiryOf(
  kept: readonly StoredKey[],
  next: StoredKey | undefined,
  graceMs: number,
): number {
  let nextExpiry = Infinity
  for (const key of kept) {
    if (key.state === 'retired') nextExpiry = Math.min(nextExpiry, retiredSince(key) + graceMs)
  }
  if (next !== undefined) nextExpiry = Math.min(nextExpiry, signsFrom(next))
  return nextExpiry
}
