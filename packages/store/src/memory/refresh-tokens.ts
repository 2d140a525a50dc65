import type { RefreshTokenStore, RotateResult } from '@tessera/grants'
import { conflictError } from '../internal/checks.js'
import { rotationStep } from '../internal/lifecycle.js'
import { settle } from '../internal/settle.js'
import { copyFamily, copyToken } from './records.js'
import type { GrantTables } from './table.js'

/** Refresh-token families in `tables`; `open` throws once the store is closed. */
export function createMemoryRefreshTokens(
  open: () => void,
  tables: GrantTables,
): {
  store: RefreshTokenStore
  /** Deletes the families expired at `now`, and their tokens; returns how many rows. */
  sweep: (now: number) => number
} {
  const { families, tokens } = tables

  // With a clientId, a token of another client is as unknown as a made-up one: nothing changes.
  function rotate(
    tenant: string,
    oldHash: string,
    newHash: string,
    now: number,
    clientId: string | undefined,
  ): RotateResult {
    const token = tokens.get(tenant, oldHash)
    const family = token && families.get(tenant, token.familyId)
    if (token === undefined || family === undefined) return { status: 'not_found' }
    if (clientId !== undefined && family.clientId !== clientId) return { status: 'not_found' }
    switch (rotationStep(token, family, now)) {
      case 'inactive':
        return { status: 'inactive', family: copyFamily(family) }
      case 'reuse':
        family.revokedAt ??= now
        return { status: 'reused', family: copyFamily(family) }
      case 'rotate':
        if (tokens.has(tenant, newHash)) throw conflictError('the refresh token')
        token.spentAt = now
        tokens.set(tenant, newHash, {
          tokenHash: newHash,
          familyId: family.familyId,
          createdAt: now,
        })
        return { status: 'rotated', family: copyFamily(family) }
    }
  }

  const store: RefreshTokenStore = {
    findRefreshToken(tenant, tokenHash) {
      return settle(() => {
        open()
        const token = tokens.get(tenant, tokenHash)
        const family = token && families.get(tenant, token.familyId)
        if (token === undefined || family === undefined) return undefined
        return { token: copyToken(token), family: copyFamily(family) }
      })
    },
    rotateRefreshToken(tenant, oldHash, newHash, now) {
      return settle(() => {
        open()
        return rotate(tenant, oldHash, newHash, now, undefined)
      })
    },
    rotateRefreshTokenForClient(tenant, clientId, oldHash, newHash, now) {
      return settle(() => {
        open()
        return rotate(tenant, oldHash, newHash, now, clientId)
      })
    },
    findFamily(tenant, familyId) {
      return settle(() => {
        open()
        const family = families.get(tenant, familyId)
        return family === undefined ? undefined : copyFamily(family)
      })
    },
    revokeFamily(tenant, familyId, now) {
      return settle(() => {
        open()
        const family = families.get(tenant, familyId)
        if (family !== undefined) family.revokedAt ??= now
      })
    },
    revokeFamiliesByCode(tenant, codeHash, now) {
      return settle(() => {
        open()
        for (const family of families.rows(tenant)) {
          if (family.codeHash === codeHash) family.revokedAt ??= now
        }
      })
    },
  }
  return {
    store,
    // Tokens first, while their family is there to say whether it has expired.
    sweep: (now) =>
      tokens.deleteWhere((token, tenant) => {
        const family = families.get(tenant, token.familyId)
        return family === undefined || family.expiresAt <= now
      }) + families.deleteWhere((family) => family.expiresAt <= now),
  }
}
