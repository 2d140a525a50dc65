import type {
  AuthorizationCodeRecord,
  RefreshFamily,
  RefreshTokenRecord,
  SessionRecord,
} from '@tessera/grants'
import type { KeyChanges, StoredKey } from '@tessera/keys'
import * as z from 'zod'
import { StoreError } from '../errors.js'
import type { ParsedConfigEntry } from '../parsed-config.js'

const KeyRowSchema = z.object({
  tenant: z.string(),
  kid: z.string(),
  alg: z.literal('RS256'),
  public_jwk: z.string(),
  private_key: z.string(),
  created_at: z.int(),
  state: z.enum(['active', 'retired', 'revoked']),
  retired_at: z.int().nullable(),
  signs_from: z.int().nullable(),
})

const WindowRowSchema = z.object({ count: z.int(), reset_at: z.int() })

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A TEXT column holding a JSON object; the parsed object is kept as JSON.parse built it. */
const ClaimsSchema = z
  .string()
  .transform((text, ctx): unknown => {
    try {
      return JSON.parse(text)
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not JSON' })
      return z.NEVER
    }
  })
  .pipe(z.custom<Record<string, unknown>>(isJsonObject, 'not a JSON object'))

const CodeRowSchema = z.object({
  tenant: z.string(),
  code_hash: z.string(),
  client_id: z.string(),
  redirect_uri: z.string(),
  code_challenge: z.string().nullable(),
  scope: z.string(),
  sub: z.string(),
  claims: ClaimsSchema,
  created_at: z.int(),
  expires_at: z.int(),
  consumed_at: z.int().nullable(),
  nonce: z.string().nullable(),
  sid: z.string().nullable(),
  auth_time: z.int().nullable(),
})

const FamilyRowSchema = z.object({
  tenant: z.string(),
  family_id: z.string(),
  client_id: z.string(),
  sub: z.string(),
  scope: z.string(),
  claims: ClaimsSchema,
  code_hash: z.string().nullable(),
  sid: z.string().nullable(),
  auth_time: z.int().nullable(),
  created_at: z.int(),
  expires_at: z.int(),
  revoked_at: z.int().nullable(),
})

const SessionRowSchema = z.object({
  tenant: z.string(),
  id_hash: z.string(),
  sid: z.string(),
  sub: z.string(),
  claims: ClaimsSchema,
  auth_time: z.int(),
  created_at: z.int(),
  expires_at: z.int(),
  ended_at: z.int().nullable(),
})

function invalid(what: string, error: z.ZodError): StoreError {
  // Paths and messages only: a row of the keys table holds private key material.
  const issues = error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
  return new StoreError('ERR_STORE_ROW_INVALID', `${what} is invalid: ${issues.join('; ')}`)
}

/** A row of `keys` as the port's StoredKey; a missing `retired_at` leaves `retiredAt` out. */
export function parseKeyRow(row: unknown): StoredKey {
  const result = KeyRowSchema.safeParse(row)
  if (!result.success) {
    const { tenant, kid } = (row ?? {}) as { tenant?: unknown; kid?: unknown }
    throw invalid(`the keys row (${String(tenant)}, ${String(kid)})`, result.error)
  }
  const r = result.data
  const key: StoredKey = {
    tenant: r.tenant,
    kid: r.kid,
    alg: r.alg,
    publicJwk: r.public_jwk,
    privateKey: r.private_key,
    createdAt: r.created_at,
    state: r.state,
  }
  if (r.retired_at !== null) key.retiredAt = r.retired_at
  if (r.signs_from !== null) key.signsFrom = r.signs_from
  return key
}

const PrunedKidRowSchema = z.object({ kid: z.string() })
const KeyChangeRowSchema = z.object({ tenant: z.string(), seq: z.int().nonnegative() })
const KeyCursorRowSchema = z.object({ seq: z.int().nonnegative() })

/** A row of `pruned_kids` as its kid. */
export function parsePrunedKidRow(row: unknown): string {
  const result = PrunedKidRowSchema.safeParse(row)
  if (!result.success) throw invalid('a pruned_kids row', result.error)
  return result.data.kid
}

/** A key_changes row: a tenant and the number of its last key write. */
export function parseKeyChangeRow(row: unknown): { tenant: string; seq: number } {
  const result = KeyChangeRowSchema.safeParse(row)
  if (!result.success) throw invalid('a key_changes row', result.error)
  return result.data
}

/** The key_change_counter row: the number of the last key write. */
export function parseKeyCursorRow(row: unknown): number {
  const result = KeyCursorRowSchema.safeParse(row)
  if (!result.success) throw invalid('the key_change_counter row', result.error)
  return result.data.seq
}

/** The answer of keyChangesSince from its rows: each tenant once, and the highest number seen. */
export function keyChangesOf(cursor: number, rows: readonly unknown[]): KeyChanges {
  let next = cursor
  const tenants: string[] = []
  for (const row of rows) {
    const { tenant, seq } = parseKeyChangeRow(row)
    tenants.push(tenant)
    next = Math.max(next, seq)
  }
  return { cursor: next, tenants }
}

/** A throttle row: how many attempts its window holds, and when it ends. */
export function parseWindow(row: unknown): { count: number; resetAt: number } {
  const result = WindowRowSchema.safeParse(row)
  if (!result.success) throw invalid('a throttle row', result.error)
  return { count: result.data.count, resetAt: result.data.reset_at }
}

/** A row of `authorization_codes`; NULL columns leave their optional fields out. */
export function parseCodeRow(row: unknown): AuthorizationCodeRecord {
  const result = CodeRowSchema.safeParse(row)
  if (!result.success) throw invalid('an authorization_codes row', result.error)
  const r = result.data
  const code: AuthorizationCodeRecord = {
    codeHash: r.code_hash,
    tenant: r.tenant,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    scope: r.scope,
    sub: r.sub,
    claims: r.claims,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }
  if (r.code_challenge !== null) code.codeChallenge = r.code_challenge
  if (r.consumed_at !== null) code.consumedAt = r.consumed_at
  if (r.nonce !== null) code.nonce = r.nonce
  if (r.sid !== null) code.sid = r.sid
  if (r.auth_time !== null) code.authTime = r.auth_time
  return code
}

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
    isText(r.token_hash) &&
    isInt(r.token_created_at) &&
    isIntOrNull(r.token_spent_at)
  )
}

/**
 * A row of `refresh_tokens` joined to its `refresh_families` row.
 *
 * Read on every refresh, so checked by hand rather than with zod (a third of zod's time);
 * `rows.test.ts` holds it to the verdicts of the equivalent zod schema.
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
  return { token, family }
}

/** A row of `refresh_families`; NULL columns leave their optional fields out. */
export function parseFamilyRow(row: unknown): RefreshFamily {
  const result = FamilyRowSchema.safeParse(row)
  if (!result.success) throw invalid('a refresh_families row', result.error)
  const r = result.data
  const family: RefreshFamily = {
    familyId: r.family_id,
    tenant: r.tenant,
    clientId: r.client_id,
    sub: r.sub,
    scope: r.scope,
    claims: r.claims,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }
  if (r.code_hash !== null) family.codeHash = r.code_hash
  if (r.sid !== null) family.sid = r.sid
  if (r.auth_time !== null) family.authTime = r.auth_time
  if (r.revoked_at !== null) family.revokedAt = r.revoked_at
  return family
}

const SessionEndRowSchema = z.object({ expires_at: z.int() })

/** The `expires_at` of a session that `endSession` ended: whether it was live is decided on it. */
export function parseSessionEnd(row: unknown): number {
  const result = SessionEndRowSchema.safeParse(row)
  if (!result.success) throw invalid('a sessions row', result.error)
  return result.data.expires_at
}

/** A row of `sessions`; a NULL `ended_at` leaves `endedAt` out. */
export function parseSessionRow(row: unknown): SessionRecord {
  const result = SessionRowSchema.safeParse(row)
  if (!result.success) throw invalid('a sessions row', result.error)
  const r = result.data
  const session: SessionRecord = {
    idHash: r.id_hash,
    tenant: r.tenant,
    sid: r.sid,
    sub: r.sub,
    claims: r.claims,
    authTime: r.auth_time,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }
  if (r.ended_at !== null) session.endedAt = r.ended_at
  return session
}

const SecretRowSchema = z.object({ value: z.string().min(1) })

/** A row of `secrets` as its value; the name is never part of a message. */
export function parseSecretRow(row: unknown): string {
  const result = SecretRowSchema.safeParse(row)
  if (!result.success) throw invalid('a secrets row', result.error)
  return result.data.value
}

const ParsedConfigRowSchema = z.object({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  value: z.string(),
})

/** A row of `parsed_config` as its entry; the value, sealed or not, is never part of a message. */
export function parseParsedConfigRow(row: unknown): ParsedConfigEntry {
  const result = ParsedConfigRowSchema.safeParse(row)
  if (!result.success) throw invalid('a parsed_config row', result.error)
  return { key: result.data.key, value: result.data.value }
}
