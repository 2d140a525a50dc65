import type { AuthorizationCodeRecord, SaveCodeOptions } from '@tessera/grants'

/**
 * How many codes already stored for the code's session and client `saveCode` keeps, or
 * undefined when it keeps them all (no options, or a code without a `sid`). The saved code
 * takes the last of the `keepPerSession` places.
 *
 * @throws TypeError for a `keepPerSession` that is not a positive integer
 */
export function codesToKeep(
  code: AuthorizationCodeRecord,
  options: SaveCodeOptions | undefined,
): number | undefined {
  if (options === undefined) return undefined
  const keep = options.keepPerSession
  if (!Number.isSafeInteger(keep) || keep < 1) {
    throw new TypeError('saveCode: keepPerSession must be a positive integer')
  }
  return code.sid === undefined ? undefined : keep - 1
}

/**
 * The unconsumed codes of `code`'s tenant, sid and client other than the `keep` newest, given
 * the codes of its tenant: what `saveCode` deletes (the memory adapter's version of the SQL
 * adapters' statement).
 */
export function codesToDrop(
  rows: Iterable<AuthorizationCodeRecord>,
  code: AuthorizationCodeRecord,
  keep: number,
): AuthorizationCodeRecord[] {
  const outstanding = [...rows].filter(
    (row) => row.sid === code.sid && row.clientId === code.clientId && row.consumedAt === undefined,
  )
  outstanding.sort((a, b) => b.createdAt - a.createdAt)
  return outstanding.slice(keep)
}
