import type { RefreshTokenStore, RotateResult } from '@tessera/grants'
import { rotationStep } from '../internal/lifecycle.js'
import { settle } from '../internal/settle.js'
import { FAMILY_COLUMNS, parseFamilyRow } from '../internal/tables/refresh-families.js'
import { parseTokenFamilyRow, TOKEN_FAMILY_SELECT_LIST } from '../internal/tables/refresh-tokens.js'
import type { SqliteContext } from './context.js'
import type { FamilyWrites } from './family-writes.js'
import type { GroupCommit } from './group-commit.js'

/** The refresh-token store over the SQLite `refresh_families` and `refresh_tokens` tables. */
export function createSqliteRefreshTokens(
  { db, use }: SqliteContext,
  families: FamilyWrites,
  groupCommit: GroupCommit,
): RefreshTokenStore {
  const selectToken = db.prepare<[string, string]>(
    `SELECT ${TOKEN_FAMILY_SELECT_LIST}
     FROM refresh_tokens AS t
     JOIN refresh_families AS f ON f.tenant = t.tenant AND f.family_id = t.family_id
     WHERE t.tenant = ? AND t.token_hash = ?`,
  )
  const spendToken = db.prepare<[number, string, string]>(
    `UPDATE refresh_tokens SET spent_at = ?
     WHERE tenant = ? AND token_hash = ? AND spent_at IS NULL`,
  )
  const selectFamily = db.prepare<[string, string]>(
    `SELECT ${FAMILY_COLUMNS} FROM refresh_families WHERE tenant = ? AND family_id = ?`,
  )
  // A family keeps the time of its first revocation.
  const revokeFamily = db.prepare<[number, string, string]>(
    `UPDATE refresh_families SET revoked_at = ?
     WHERE tenant = ? AND family_id = ? AND revoked_at IS NULL`,
  )
  const revokeFamiliesByCode = db.prepare<[number, string, string]>(
    `UPDATE refresh_families SET revoked_at = ?
     WHERE tenant = ? AND code_hash = ? AND revoked_at IS NULL`,
  )

  // IMMEDIATE (see group-commit.ts): the read and the writes that depend on it hold the write
  // lock together, so another connection cannot spend the token in between.
  // With a clientId, a token of another client is as unknown as a made-up one: nothing changes.
  const rotate = db.transaction(
    (
      tenant: string,
      oldHash: string,
      newHash: string,
      now: number,
      clientId: string | undefined,
    ): RotateResult => {
      const row = selectToken.get(tenant, oldHash)
      if (row === undefined) return { status: 'not_found' }
      const { token, family } = parseTokenFamilyRow(row)
      if (clientId !== undefined && family.clientId !== clientId) return { status: 'not_found' }
      const reuse = (): RotateResult => {
        if (family.revokedAt === undefined) {
          revokeFamily.run(now, tenant, family.familyId)
          family.revokedAt = now
        }
        return { status: 'reused', family }
      }
      switch (rotationStep(token, family, now)) {
        case 'inactive':
          return { status: 'inactive', family }
        case 'reuse':
          return reuse()
        case 'rotate':
          // Cannot miss under the write lock; if it ever did, the token was spent: a reuse.
          if (spendToken.run(now, tenant, oldHash).changes !== 1) return reuse()
          families.addToken(tenant, newHash, family.familyId, now)
          return { status: 'rotated', family }
      }
    },
  )
  return {
    findRefreshToken(tenant, tokenHash) {
      return settle(() => {
        use()
        const row = selectToken.get(tenant, tokenHash)
        return row === undefined ? undefined : parseTokenFamilyRow(row)
      })
    },
    rotateRefreshToken(tenant, oldHash, newHash, now) {
      return groupCommit.queue(rotate, [tenant, oldHash, newHash, now, undefined])
    },
    rotateRefreshTokenForClient(tenant, clientId, oldHash, newHash, now) {
      return groupCommit.queue(rotate, [tenant, oldHash, newHash, now, clientId])
    },
    findFamily(tenant, familyId) {
      return settle(() => {
        use()
        const row = selectFamily.get(tenant, familyId)
        return row === undefined ? undefined : parseFamilyRow(row)
      })
    },
    revokeFamily(tenant, familyId, now) {
      return settle(() => {
        use()
        revokeFamily.run(now, tenant, familyId)
      })
    },
    revokeFamiliesByCode(tenant, codeHash, now) {
      return settle(() => {
        use()
        revokeFamiliesByCode.run(now, tenant, codeHash)
      })
    },
  }
}
