import type { RefreshFamily, RefreshTokenRecord } from '@tessera/grants'
import { StoreError } from '../../errors.js'
import { FAMILY_COLUMN_NAMES } from './refresh-families.js'
import { isJsonObject } from './shared.js'

/**
 * What a rotation reads: a `refresh_tokens` row joined to its family (`f`), the token's own
 * columns prefixed so that they cannot shadow the family's. Each dialect adds the FROM and WHERE.
 */
export const TOKEN_FAMILY_SELECT_LIST = [
  ...FAMILY_COLUMN_NAMES.map((column) => `f.${column}`),
  't.token_hash',
  't.created_at AS token_created_at',
  't.spent_at AS token_spent_at',
].join(', ')

/** The type of a column as the row schemas check it; `?` allows NULL. */
type ColumnKind = 'text' | 'text?' | 'int' | 'int?'

/**
 * A refresh_tokens row joined to its family; the token's own columns carry a `token_` prefix.
 * `claims` is also checked to be the text of a JSON object.
 */
const TOKEN_FAMILY_COLUMNS = [
  ['tenant', 'text'],
  ['family_id', 'text'],
  ['client_id', 'text'],
  ['sub', 'text'],
  ['scope', 'text'],
  ['claims', 'text'],
  ['code_hash', 'text?'],
  ['sid', 'text?'],
  ['auth_time', 'int?'],
  ['created_at', 'int'],
  ['expires_at', 'int'],
  ['revoked_at', 'int?'],
  ['resources', 'text?'],
  ['dpop_jkt', 'text?'],
  ['token_hash', 'text'],
  ['token_created_at', 'int'],
  ['token_spent_at', 'int?'],
] as const satisfies readonly (readonly [string, ColumnKind])[]

type TokenFamilyRow = {
  [C in (typeof TOKEN_FAMILY_COLUMNS)[number] as C[0]]: C[1] extends 'text'
    ? string
    : C[1] extends 'text?'
      ? string | null
      : C[1] extends 'int'
        ? number
        : number | null
}

/** What is wrong with one value, in the terms of z.string(), z.int() and .nullable(). */
function columnIssue(value: unknown, kind: ColumnKind): string | undefined {
  if (value === null && (kind === 'text?' || kind === 'int?')) return undefined
  if (kind === 'text' || kind === 'text?') {
    return typeof value === 'string' ? undefined : 'expected a string'
  }
  // z.int() accepts the safe integers only.
  return Number.isSafeInteger(value) ? undefined : 'expected an integer'
}

/** What is wrong with a row, column by column: the message of a refused row. */
function rowIssues(row: unknown, columns: readonly (readonly [string, ColumnKind])[]): string[] {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return ['expected an object']
  const values = row as Record<string, unknown>
  const issues: string[] = []
  for (const [name, kind] of columns) {
    const issue = columnIssue(values[name], kind)
    if (issue !== undefined) issues.push(`${name}: ${issue}`)
  }
  return issues
}

/** The JSON object a claims column holds, or undefined for anything else. */
function parseClaims(text: string): Record<string, unknown> | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  return isJsonObject(value) ? value : undefined
}

const isText = (value: unknown): value is string => typeof value === 'string'
const isTextOrNull = (value: unknown): value is string | null =>
  value === null || typeof value === 'string'
const isInt = (value: unknown): value is number => Number.isSafeInteger(value)
const isIntOrNull = (value: unknown): value is number | null =>
  value === null || Number.isSafeInteger(value)

/** TOKEN_FAMILY_COLUMNS written out, for the refresh path: a third of the time of a loop. */
function isTokenFamilyRow(row: unknown): row is TokenFamilyRow {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return false
  const r = row as Record<string, unknown>
  return (
    isText(r.tenant) &&
    isText(r.family_id) &&
    isText(r.client_id) &&
    isText(r.sub) &&
    isText(r.scope) &&
    isText(r.claims) &&
    isTextOrNull(r.code_hash) &&
    isTextOrNull(r.sid) &&
    isIntOrNull(r.auth_time) &&
    isInt(r.created_at) &&
    isInt(r.expires_at) &&
    isIntOrNull(r.revoked_at) &&
    isTextOrNull(r.resources) &&
    isTextOrNull(r.dpop_jkt) &&
    isText(r.token_hash) &&
    isInt(r.token_created_at) &&
    isIntOrNull(r.token_spent_at)
  )
}

/**
 * A row of `refresh_tokens` joined to its `refresh_families` row.
 *
 * Read on every refresh, so checked by hand rather than with zod (a third of zod's time);
 * `refresh-tokens.test.ts` holds it to the verdicts of the equivalent zod schema.
 */
export function parseTokenFamilyRow(row: unknown): {
  token: RefreshTokenRecord
  family: RefreshFamily
} {
  const claims = isTokenFamilyRow(row) ? parseClaims(row.claims) : undefined
  if (claims === undefined) {
    const issues = rowIssues(row, TOKEN_FAMILY_COLUMNS)
    if (issues.length === 0) issues.push('claims: not a JSON object')
    throw new StoreError(
      'ERR_STORE_ROW_INVALID',
      `a refresh_tokens row with its family is invalid: ${issues.join('; ')}`,
    )
  }
  const r = row as TokenFamilyRow
  const token: RefreshTokenRecord = {
    tokenHash: r.token_hash,
    familyId: r.family_id,
    createdAt: r.token_created_at,
  }
  if (r.token_spent_at !== null) token.spentAt = r.token_spent_at
  const family: RefreshFamily = {
    familyId: r.family_id,
    tenant: r.tenant,
    clientId: r.client_id,
    sub: r.sub,
    scope: r.scope,
    claims,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }
  if (r.code_hash !== null) family.codeHash = r.code_hash
  if (r.sid !== null) family.sid = r.sid
  if (r.auth_time !== null) family.authTime = r.auth_time
  if (r.revoked_at !== null) family.revokedAt = r.revoked_at
  if (r.resources !== null) family.resources = r.resources.split(' ')
  if (r.dpop_jkt !== null) family.dpopJkt = r.dpop_jkt
  return { token, family }
}
