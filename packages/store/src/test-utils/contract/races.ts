import type { FailureCounter, FailureLimit } from '@tessera/grants'
import { expect } from 'vitest'
import type { Store } from '../../store.js'
import { codeRecord, minute, refreshFamily, sessionRecord, sha256, t0 } from './fixtures.js'

// Races that one store runs against itself in the contract, and that stores or processes sharing
// a database (replicas) run against each other.

/**
 * `rounds` logouts (on `ender`), each racing a redemption of a code of its sid (on `redeemer`);
 * two stores on one database stand for two replicas. Whichever wins, no family of an ended sid
 * is left live: either the redemption fails, or its family is revoked by the logout. Answers how
 * many redemptions succeeded, so that a caller can tell which orders it saw.
 */
export async function raceLogoutAndRedemption(
  redeemer: Store,
  ender: Store,
  rounds: number,
): Promise<number> {
  const at = t0 + minute
  const codeHash = (i: number): string => sha256(`race-code-${i}`)
  const indexes = Array.from({ length: rounds }, (_, i) => i)
  for (const i of indexes) {
    const sid = `race-sid-${i}`
    await ender.sessions.createSession(sessionRecord({ idHash: sha256(`race-${i}`), sid }))
    await redeemer.codes.saveCode(codeRecord({ codeHash: codeHash(i), sid, authTime: t0 }))
  }
  const outcomes = await Promise.all(
    indexes.map(async (i) => {
      const sid = `race-sid-${i}`
      const redeem = (): Promise<boolean> =>
        redeemer.codes.redeemCode('acme', codeHash(i), at, {
          family: refreshFamily({
            familyId: `race-family-${i}`,
            codeHash: codeHash(i),
            sid,
            authTime: t0,
          }),
          tokenHash: sha256(`race-rt-${i}`),
        })
      const end = (): Promise<boolean> => ender.sessions.endSession('acme', sid, at)
      // Half the rounds ask for the logout first.
      if (i % 2 === 0) {
        const [redeemed, ended] = await Promise.all([redeem(), end()])
        return { i, redeemed, ended }
      }
      const [ended, redeemed] = await Promise.all([end(), redeem()])
      return { i, redeemed, ended }
    }),
  )
  for (const { i, redeemed, ended } of outcomes) {
    expect(ended, `round ${i}`).toBe(true)
    const family = await ender.refreshTokens.findFamily('acme', `race-family-${i}`)
    if (redeemed) expect(family?.revokedAt, `round ${i}`).toBe(at)
    else expect(family, `round ${i}`).toBeUndefined()
    expect((await ender.codes.findCode('acme', codeHash(i)))?.consumedAt, `round ${i}`).toBe(at)
    const token = await ender.refreshTokens.findRefreshToken('acme', sha256(`race-rt-${i}`))
    if (redeemed) expect(token?.family.revokedAt, `round ${i}`).toBe(at)
  }
  return outcomes.filter(({ redeemed }) => redeemed).length
}

/**
 * How many of `calls` concurrent recordFailure calls on `keys` (in windows of 15 minutes) were
 * counted, on counters that may be one store's or several stores' (replicas) sharing a database.
 */
export async function recordConcurrently(
  counters: readonly FailureCounter[],
  calls: number,
  keys: readonly FailureLimit[],
  now: number,
): Promise<number> {
  const records = await Promise.all(
    Array.from({ length: calls }, (_, i) =>
      (counters[i % counters.length] as FailureCounter).recordFailure(keys, {
        now,
        windowMs: 15 * minute,
      }),
    ),
  )
  return records.filter((record) => record.recorded).length
}
