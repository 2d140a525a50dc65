import type { AuthorizationCodeStore } from '@tessera/grants'
import { codesToKeep } from '../internal/code-bound.js'
import {
  CODE_COLUMN_NAMES,
  CODE_COLUMNS,
  codeValues,
  parseCodeRow,
} from '../internal/tables/authorization-codes.js'
import { FAMILY_COLUMNS, familyValues } from '../internal/tables/refresh-families.js'
import { placeholders, utf8, type PgRunner } from './runner.js'

/** Saves a code: its columns as $1 … $16, in CODE_COLUMNS order. */
const INSERT_CODE = `INSERT INTO authorization_codes (${CODE_COLUMNS})
  VALUES (${placeholders(CODE_COLUMN_NAMES)})`

/**
 * INSERT_CODE, and the session's older codes trimmed ($13 is the sid, $3 the client, $17 how
 * many to keep). One statement: the DELETE does not see the row being inserted, so it keeps
 * `keep` older codes of the session and client, and the new one makes keepPerSession.
 */
const INSERT_CODE_BOUNDED = `WITH saved AS (${INSERT_CODE} RETURNING 1)
  DELETE FROM authorization_codes
  WHERE tenant = $1 AND sid = $13 AND client_id = $3 AND consumed_at IS NULL
    AND code_hash <> $2 AND code_hash NOT IN (SELECT code_hash FROM authorization_codes
      WHERE tenant = $1 AND sid = $13 AND client_id = $3 AND consumed_at IS NULL
        AND code_hash <> $2
      ORDER BY created_at DESC LIMIT $17)`

/** Consumes a live code: $1 tenant, $2 code hash, $3 now. */
const CONSUME_CODE = `UPDATE authorization_codes SET consumed_at = $3
  WHERE tenant = $1 AND code_hash = $2 AND consumed_at IS NULL AND expires_at > $3`

/**
 * CONSUME_CODE, then the family ($4 … $16: its columns after the tenant, in FAMILY_COLUMNS
 * order) and its first token ($17, none when NULL), in one statement. The INSERTs read the row
 * the step before returned, so they run only for the redemption that won; the token's foreign
 * key is checked at the end of the statement, when its family exists. Parameters are cast: in
 * an INSERT … SELECT, an untyped one would be taken for text.
 */
const REDEEM_CODE = `
  WITH consumed AS (
    ${CONSUME_CODE}
    RETURNING tenant
  ),
  family AS (
    INSERT INTO refresh_families (${FAMILY_COLUMNS})
    SELECT tenant, $4::text, $5::text, $6::text, $7::text, $8::json, $9::text, $10::text,
      $11::bigint, $12::bigint, $13::bigint, $14::bigint, $15::text, $16::text
    FROM consumed
    RETURNING tenant, family_id
  ),
  token AS (
    INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at, spent_at)
    SELECT tenant, $17::text, family_id, $3::bigint, NULL FROM family WHERE $17::text IS NOT NULL
    RETURNING token_hash
  )
  SELECT (SELECT count(*) FROM consumed)::int AS redeemed`

/** The code store over the PostgreSQL `authorization_codes` table. */
export function createPostgresCodes({ run }: PgRunner): AuthorizationCodeStore {
  return {
    saveCode(code, options) {
      return run('saveCode', async (sql) => {
        const keep = codesToKeep(code, options)
        const values = codeValues(code, utf8)
        if (keep === undefined) await sql(INSERT_CODE, values)
        else await sql(INSERT_CODE_BOUNDED, [...values, keep])
      })
    },
    findCode(tenant, codeHash) {
      return run('findCode', async (sql) => {
        const { rows } = await sql(
          `SELECT ${CODE_COLUMNS} FROM authorization_codes WHERE tenant = $1 AND code_hash = $2`,
          [tenant, codeHash],
        )
        return rows.length === 0 ? undefined : parseCodeRow(rows[0])
      })
    },
    redeemCode(tenant, codeHash, now, issue) {
      // A conditional UPDATE is the whole decision: of concurrent redemptions, on any replica,
      // the first to update the row wins; the others wait on its row lock, then see consumed_at
      // set (READ COMMITTED re-checks the WHERE on the committed row) and change nothing. Only
      // the winner creates the family, in the same statement (REDEEM_CODE), so a failed INSERT
      // also undoes the consumption.
      return run('redeemCode', async (sql) => {
        if (issue === undefined) {
          return (await sql(CONSUME_CODE, [tenant, codeHash, now])).rowCount === 1
        }
        // The family's tenant is the consumed code's ($1).
        const [, ...family] = familyValues(issue.family)
        const { rows } = await sql<Record<string, unknown>>(REDEEM_CODE, [
          tenant,
          codeHash,
          now,
          ...family,
          issue.tokenHash ?? null,
        ])
        return rows[0]?.redeemed === 1
      })
    },
  }
}
