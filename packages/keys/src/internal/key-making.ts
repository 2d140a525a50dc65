import { generateRsaKey } from '../generate.js'
import type { KeyMakeReason, LoadKeyRingOptions } from '../key-ring.js'
import { kidForDate } from '../kid.js'
import type { StoredKey } from '../ports.js'
import type { GenerateKey } from './key-ops.js'
import { kidDate } from './kid.js'
import { keyGenerations } from './limiter.js'

/** What decides, besides its keys, whether a ring makes a key now. */
export interface DueContext {
  /** The ring keeps an active RS256 key: RS256 access tokens, or ID tokens. */
  keepsKey: boolean
  /** The ring's owner shut down: nothing more is made. */
  aborted: boolean
  /** The load found an active key of an earlier date with rotateOnRestart. */
  restartPending: boolean
  /** KEY_ROTATION_DAYS in milliseconds, if keys rotate by age. */
  rotationMs: number | undefined
}

/** Whether the active key is named for (or was made on) an earlier UTC date than `now`'s. */
function isFromEarlierDate(active: Pick<StoredKey, 'kid' | 'createdAt'>, now: number): boolean {
  return (kidDate(active.kid) ?? kidForDate(active.createdAt)) < kidForDate(now)
}

/** Why a ring should make a key now, given its active key; undefined when it should not. */
export function dueReason(
  context: DueContext,
  active: Pick<StoredKey, 'kid' | 'createdAt'> | undefined,
  next: Pick<StoredKey, 'kid'> | undefined,
  now: number,
): KeyMakeReason | undefined {
  if (!context.keepsKey || context.aborted) return undefined
  if (active === undefined) return 'first'
  // A key published ahead is the rotation under way.
  if (next !== undefined) return undefined
  const { rotationMs } = context
  if (context.restartPending && isFromEarlierDate(active, now)) return 'restart'
  if (rotationMs !== undefined && now - active.createdAt >= rotationMs) return 'age'
  return undefined
}

/**
 * Whether a load that found `active` (and no key published ahead) owes a restart rotation: with
 * KEY_ROTATE_ON_RESTART, a start on a later date than the active key's makes a new one.
 */
export function isRestartDue(
  rotateOnRestart: boolean,
  active: StoredKey | undefined,
  next: StoredKey | undefined,
  now: number,
): boolean {
  return (
    rotateOnRestart && active !== undefined && next === undefined && isFromEarlierDate(active, now)
  )
}

/**
 * How long after its creation a new key starts signing. A key made while another signs is
 * published ahead; a first key or the replacement of a revoked one signs at once, unless the
 * tenant's access tokens switch from HS256.
 */
export function publishAheadMs(
  active: StoredKey | undefined,
  options: Pick<LoadKeyRingOptions, 'firstKeyAhead' | 'publishAheadMs'>,
): number {
  return active !== undefined || options.firstKeyAhead === true ? (options.publishAheadMs ?? 0) : 0
}

/** One RSA pair under the process-wide limit; a first key jumps the queue of rotations. */
export function generateKey(
  options: Pick<LoadKeyRingOptions, 'tenant' | 'signal' | 'generateKey' | 'now'>,
  reason: KeyMakeReason,
): Promise<StoredKey> {
  const { tenant, signal } = options
  const generate = options.generateKey ?? generateRsaKey
  return keyGenerations.run(
    () => {
      const now = options.now()
      return generate(tenant, kidForDate(now), now)
    },
    { urgent: reason === 'first', ...(signal === undefined ? {} : { signal }) },
  )
}

/**
 * A {@link GenerateKey} that hands out `spare` (a pair already made) first, then generates more
 * with `more`: the insert that follows a lost race needs a fresh candidate.
 */
export function spareFirst(
  spare: StoredKey,
  more: () => Promise<StoredKey>,
  signal: AbortSignal | undefined,
): GenerateKey {
  let left: StoredKey | undefined = spare
  return async () => {
    signal?.throwIfAborted()
    if (left === undefined) return more()
    const key = left
    left = undefined
    return key
  }
}
