import type { RefreshTokenStore, RotateResult } from '@tessera/grants'
import { rotationStep } from '../internal/lifecycle.js'
import { FAMILY_COLUMNS, parseFamilyRow } from '../internal/tables/refresh-families.js'
import { parseTokenFamilyRow, TOKEN_FAMILY_SELECT_LIST } from '../internal/tables/refresh-tokens.js'
import type { PgRunner } from './runner.js'

/** A token and its family by $1 tenant and $2 token hash. */
const TOKEN_FAMILY_SELECT = `
  SELECT ${TOKEN_FAMILY_SELECT_LIST}
  FROM refresh_tokens AS t
  JOIN refresh_families AS f ON f.tenant = t.tenant AND f.family_id = t.family_id
  WHERE t.tenant = $1 AND t.token_hash = $2`

/**
 * A rotation as one statement, so one round trip and one commit (see rotateRefreshToken).
 * Parameters: $1 tenant, $2 the presented hash, $3 now, $4 the new hash, and, with `forClient`,
 * $5 the client that presents it.
 *
 * - `locked` reads the token and its family and locks both rows (NO KEY UPDATE, the lock an
 *   UPDATE of non-key columns takes: foreign-key checks on the family stay unblocked).
 *   Concurrent rotations of one token, on any replica, queue here. Under READ COMMITTED a row
 *   lock that had to wait re-reads the newest committed version of both rows and re-checks the
 *   join (EvalPlanQual), so `locked` holds the rows as the last holder of the lock committed
 *   them, not as the statement's snapshot saw them. With a client, a family of another client
 *   is filtered out before the lock: its token is as unknown as a made-up one, and nothing
 *   changes. A CTE with a row lock is never inlined, so it is read, and locked, once.
 * - `decided` applies the rules of rotationStep (internal/lifecycle.ts) to those rows; the
 *   adapter checks that both agree.
 * - `revoked` and `spent` write only the rows `locked` holds, and find them by primary key: the
 *   snapshot's version when nothing changed since, else (READ COMMITTED again) the newest
 *   version, which this statement has locked, with the WHERE re-checked on it. Never by ctid:
 *   the newest version may be invisible to the snapshot. Each row is written at most once.
 * - `issued` inserts the new token only once the old one is spent. A taken `newHash` fails the
 *   whole statement, the spend included.
 */
function rotationSql(forClient: boolean): string {
  return `
  WITH locked AS (
    ${TOKEN_FAMILY_SELECT}${forClient ? ' AND f.client_id = $5' : ''}
    FOR NO KEY UPDATE OF t, f
  ),
  decided AS (
    SELECT locked.*, CASE
        WHEN expires_at <= $3::bigint THEN 'inactive'
        WHEN token_spent_at IS NOT NULL THEN 'reuse'
        WHEN revoked_at IS NOT NULL THEN 'inactive'
        ELSE 'rotate'
      END AS step
    FROM locked
  ),
  revoked AS (
    UPDATE refresh_families AS f SET revoked_at = $3::bigint
    FROM decided AS d
    WHERE d.step = 'reuse' AND f.tenant = d.tenant AND f.family_id = d.family_id
      AND f.revoked_at IS NULL
    RETURNING f.revoked_at
  ),
  spent AS (
    UPDATE refresh_tokens AS t SET spent_at = $3::bigint
    FROM decided AS d
    WHERE d.step = 'rotate' AND t.tenant = d.tenant AND t.token_hash = d.token_hash
      AND t.spent_at IS NULL
    RETURNING t.tenant, t.family_id
  ),
  issued AS (
    INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at, spent_at)
    SELECT tenant, $4::text, family_id, $3::bigint, NULL FROM spent
    RETURNING token_hash
  )
  SELECT decided.*,
    (SELECT count(*) FROM revoked)::int AS revoked_count,
    (SELECT count(*) FROM issued)::int AS issued_count
  FROM decided`
}

const ROTATE = rotationSql(false)
const ROTATE_FOR_CLIENT = rotationSql(true)

/** The refresh-token store over the PostgreSQL `refresh_families` and `refresh_tokens` tables. */
export function createPostgresRefreshTokens({ run }: PgRunner): RefreshTokenStore {
  /**
   * One rotation, one statement (see rotationSql): no transaction to open and commit around it,
   * so one round trip where BEGIN, SELECT … FOR NO KEY UPDATE, UPDATE, INSERT and COMMIT took
   * five. The statement is its own transaction: a failure anywhere undoes all of it.
   */
  function rotate(
    method: string,
    tenant: string,
    oldHash: string,
    newHash: string,
    now: number,
    clientId?: string,
  ): Promise<RotateResult> {
    return run(method, async (sql): Promise<RotateResult> => {
      const { rows } =
        clientId === undefined
          ? await sql<Record<string, unknown>>(ROTATE, [tenant, oldHash, now, newHash])
          : await sql<Record<string, unknown>>(ROTATE_FOR_CLIENT, [
              tenant,
              oldHash,
              now,
              newHash,
              clientId,
            ])
      const row = rows[0]
      if (row === undefined) return { status: 'not_found' }
      // The rows as locked, before this statement's writes. The statement applies the rules of
      // rotationStep, and under its row locks every write the step needs succeeds: should the
      // two ever disagree, that is a bug to report, not an outcome.
      const { token, family } = parseTokenFamilyRow(row)
      const step = rotationStep(token, family, now)
      const revoked = step === 'reuse' && family.revokedAt === undefined ? 1 : 0
      const issued = step === 'rotate' ? 1 : 0
      if (row.step !== step || row.revoked_count !== revoked || row.issued_count !== issued) {
        throw new Error(`${method}: the statement did not do what rotationStep decided (${step})`)
      }
      switch (step) {
        case 'inactive':
          return { status: 'inactive', family }
        case 'reuse':
          family.revokedAt ??= now
          return { status: 'reused', family }
        case 'rotate':
          return { status: 'rotated', family }
      }
    })
  }

  return {
    findRefreshToken(tenant, tokenHash) {
      return run('findRefreshToken', async (sql) => {
        const { rows } = await sql(TOKEN_FAMILY_SELECT, [tenant, tokenHash])
        return rows.length === 0 ? undefined : parseTokenFamilyRow(rows[0])
      })
    },
    rotateRefreshToken(tenant, oldHash, newHash, now) {
      return rotate('rotateRefreshToken', tenant, oldHash, newHash, now)
    },
    // With a client, a token of another client is as unknown as a made-up one: nothing changes.
    rotateRefreshTokenForClient(tenant, clientId, oldHash, newHash, now) {
      return rotate('rotateRefreshTokenForClient', tenant, oldHash, newHash, now, clientId)
    },
    findFamily(tenant, familyId) {
      return run('findFamily', async (sql) => {
        const { rows } = await sql(
          `SELECT ${FAMILY_COLUMNS} FROM refresh_families WHERE tenant = $1 AND family_id = $2`,
          [tenant, familyId],
        )
        return rows.length === 0 ? undefined : parseFamilyRow(rows[0])
      })
    },
    revokeFamily(tenant, familyId, now) {
      return run('revokeFamily', async (sql) => {
        // A family keeps the time of its first revocation.
        await sql(
          `UPDATE refresh_families SET revoked_at = $3
           WHERE tenant = $1 AND family_id = $2 AND revoked_at IS NULL`,
          [tenant, familyId, now],
        )
      })
    },
    revokeFamiliesByCode(tenant, codeHash, now) {
      return run('revokeFamiliesByCode', async (sql) => {
        await sql(
          `UPDATE refresh_families SET revoked_at = $3
           WHERE tenant = $1 AND code_hash = $2 AND revoked_at IS NULL`,
          [tenant, codeHash, now],
        )
      })
    },
  }
}
