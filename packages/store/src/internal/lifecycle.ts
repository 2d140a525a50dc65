import type { RefreshFamily, RefreshTokenRecord } from '@tessera/grants'

/**
 * How long `purgeExpired` keeps an authorization code past its expiry: a code replayed within
 * this hour is still recognised as a replay, so the families it issued are revoked
 * (RFC 6749 §4.1.2), instead of being answered as an unknown code.
 */
export const CODE_RETENTION_MS = 60 * 60 * 1000

/** What `rotateRefreshToken` does with a token it found, decided the same way by every adapter. */
export type RotationStep = 'inactive' | 'reuse' | 'rotate'

/**
 * The rotation rules, in order:
 *
 * 1. the family has expired at `now` → inactive; nothing changes (an ended family needs no
 *    revoking);
 * 2. the token is spent → reuse: the family is revoked, unless it already is, and the answer is
 *    `reused` even when an earlier reuse revoked it. A spent token thus always answers the same,
 *    however concurrent presentations of it are ordered;
 * 3. the family is revoked → inactive;
 * 4. otherwise → rotate.
 */
export function rotationStep(
  token: RefreshTokenRecord,
  family: RefreshFamily,
  now: number,
): RotationStep {
  if (family.expiresAt <= now) return 'inactive'
  if (token.spentAt !== undefined) return 'reuse'
  if (family.revokedAt !== undefined) return 'inactive'
  return 'rotate'
}
