import type Database from 'better-sqlite3'
import type { RefreshFamily } from '@tessera/grants'
import {
  FAMILY_COLUMN_NAMES,
  FAMILY_COLUMNS,
  familyValues,
} from '../internal/tables/refresh-families.js'
import { insertOnce, placeholders } from './context.js'

/** The inserts of families and tokens, shared by a code's redemption and a rotation. */
export interface FamilyWrites {
  /** Inserts a family; a taken familyId is ERR_STORE_CONFLICT. */
  addFamily(family: RefreshFamily): void
  /** Inserts an unspent token of a family; a taken tokenHash is ERR_STORE_CONFLICT. */
  addToken(tenant: string, tokenHash: string, familyId: string, now: number): void
}

export function createFamilyWrites(db: Database.Database): FamilyWrites {
  const insertFamily = db.prepare<[unknown[]]>(
    `INSERT INTO refresh_families (${FAMILY_COLUMNS})
     VALUES (${placeholders(FAMILY_COLUMN_NAMES)})`,
  )
  // Positional parameters: on the refresh path, where named ones cost a microsecond more.
  const insertToken = db.prepare<[string, string, string, number]>(
    `INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at, spent_at)
     VALUES (?, ?, ?, ?, NULL)`,
  )
  return {
    addFamily(family) {
      insertOnce('the refresh family', () => insertFamily.run(familyValues(family)))
    },
    addToken(tenant, tokenHash, familyId, now) {
      insertOnce('the refresh token', () => insertToken.run(tenant, tokenHash, familyId, now))
    },
  }
}
