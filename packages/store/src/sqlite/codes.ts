import type { AuthorizationCodeStore, FamilyIssue } from '@tessera/grants'
import { codesToKeep } from '../internal/code-bound.js'
import { settle } from '../internal/settle.js'
import {
  CODE_COLUMN_NAMES,
  CODE_COLUMNS,
  codeValues,
  parseCodeRow,
} from '../internal/tables/authorization-codes.js'
import { asText } from '../internal/tables/shared.js'
import { insertOnce, placeholders, type SqliteContext } from './context.js'
import type { FamilyWrites } from './family-writes.js'

/** The code store over the SQLite `authorization_codes` table. */
export function createSqliteCodes(
  { db, use, wrote }: SqliteContext,
  families: FamilyWrites,
): AuthorizationCodeStore {
  const insertCode = db.prepare<[unknown[]]>(
    `INSERT INTO authorization_codes (${CODE_COLUMNS})
     VALUES (${placeholders(CODE_COLUMN_NAMES)})`,
  )
  // The session's unconsumed codes of one client, other than @codeHash, beyond the newest @keep
  // (see saveCode).
  const trimSessionCodes = db.prepare<{
    tenant: string
    sid: string
    clientId: string
    codeHash: string
    keep: number
  }>(
    `DELETE FROM authorization_codes
     WHERE tenant = @tenant AND sid = @sid AND client_id = @clientId AND consumed_at IS NULL
       AND code_hash <> @codeHash AND code_hash NOT IN (SELECT code_hash FROM authorization_codes
         WHERE tenant = @tenant AND sid = @sid AND client_id = @clientId AND consumed_at IS NULL
           AND code_hash <> @codeHash
         ORDER BY created_at DESC LIMIT @keep)`,
  )
  const selectCode = db.prepare<[string, string]>(
    `SELECT ${CODE_COLUMNS} FROM authorization_codes WHERE tenant = ? AND code_hash = ?`,
  )
  const consumeCode = db.prepare<[number, string, string, number]>(
    `UPDATE authorization_codes SET consumed_at = ?
     WHERE tenant = ? AND code_hash = ? AND consumed_at IS NULL AND expires_at > ?`,
  )

  // Only the one call whose UPDATE changes the row goes on to create the family; a throw from
  // either INSERT rolls the consumption back too.
  const redeem = db.transaction(
    (tenant: string, codeHash: string, now: number, issue: FamilyIssue | undefined): boolean => {
      if (consumeCode.run(now, tenant, codeHash, now).changes !== 1) return false
      if (issue !== undefined) {
        const { family } = issue
        families.addFamily(family)
        if (issue.tokenHash !== undefined) {
          families.addToken(tenant, issue.tokenHash, family.familyId, now)
        }
      }
      return true
    },
  )

  return {
    saveCode(code, options) {
      return settle(() => {
        use()
        const keep = codesToKeep(code, options)
        const insert = (): void =>
          insertOnce('the authorization code', () => insertCode.run(codeValues(code, asText)))
        if (keep === undefined || code.sid === undefined) insert()
        else {
          const { tenant, sid, clientId, codeHash } = code
          db.transaction(() => {
            insert()
            trimSessionCodes.run({ tenant, sid, clientId, codeHash, keep })
          })()
        }
        wrote()
      })
    },
    findCode(tenant, codeHash) {
      return settle(() => {
        use()
        const row = selectCode.get(tenant, codeHash)
        return row === undefined ? undefined : parseCodeRow(row)
      })
    },
    redeemCode(tenant, codeHash, now, issue) {
      return settle(() => {
        use()
        const redeemed = redeem.immediate(tenant, codeHash, now, issue)
        wrote()
        return redeemed
      })
    },
  }
}
