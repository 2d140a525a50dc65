import type { AuthorizationCodeStore, RefreshFamily } from '@tessera/grants'
import { conflictError } from '../internal/checks.js'
import { codesToDrop, codesToKeep } from '../internal/code-bound.js'
import { CODE_RETENTION_MS } from '../internal/lifecycle.js'
import { settle } from '../internal/settle.js'
import { copyCode, copyFamily } from './records.js'
import type { GrantTables } from './table.js'

/**
 * Authorization codes in `tables`; a redemption writes the family and token it issues there too.
 * `open` throws once the store is closed.
 */
export function createMemoryCodes(
  open: () => void,
  tables: GrantTables,
): {
  store: AuthorizationCodeStore
  /** Deletes the codes past their retention at `now`; returns how many. */
  sweep: (now: number) => number
} {
  const { codes, families, tokens } = tables
  const store: AuthorizationCodeStore = {
    saveCode(code, options) {
      return settle(() => {
        open()
        const keep = codesToKeep(code, options)
        if (codes.has(code.tenant, code.codeHash)) throw conflictError('the authorization code')
        if (keep !== undefined) {
          const drop = new Set(codesToDrop(codes.rows(code.tenant), code, keep))
          codes.deleteWhere((row) => drop.has(row))
        }
        codes.set(code.tenant, code.codeHash, copyCode(code))
      })
    },
    findCode(tenant, codeHash) {
      return settle(() => {
        open()
        const code = codes.get(tenant, codeHash)
        return code === undefined ? undefined : copyCode(code)
      })
    },
    redeemCode(tenant, codeHash, now, issue) {
      return settle(() => {
        open()
        const code = codes.get(tenant, codeHash)
        if (code === undefined || code.consumedAt !== undefined || code.expiresAt <= now) {
          return false
        }
        let family: RefreshFamily | undefined
        if (issue !== undefined) {
          if (families.has(tenant, issue.family.familyId)) {
            throw conflictError('the refresh family')
          }
          if (issue.tokenHash !== undefined && tokens.has(tenant, issue.tokenHash)) {
            throw conflictError('the refresh token')
          }
          family = copyFamily(issue.family)
        }
        code.consumedAt = now
        if (issue !== undefined && family !== undefined) {
          families.set(tenant, family.familyId, family)
          if (issue.tokenHash !== undefined) {
            tokens.set(tenant, issue.tokenHash, {
              tokenHash: issue.tokenHash,
              familyId: family.familyId,
              createdAt: now,
            })
          }
        }
        return true
      })
    },
  }
  return {
    store,
    sweep: (now) => codes.deleteWhere((code) => code.expiresAt <= now - CODE_RETENTION_MS),
  }
}
