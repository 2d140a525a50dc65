import type { AuthorizationCodeRecord } from '@tessera/grants'
import * as z from 'zod'
import { ClaimsSchema, columnList, invalid, type Verbatim } from './shared.js'

/** The columns of `authorization_codes`, in the order of {@link codeValues}. */
export const CODE_COLUMN_NAMES = [
  'tenant',
  'code_hash',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'scope',
  'sub',
  'claims',
  'created_at',
  'expires_at',
  'consumed_at',
  'nonce',
  'sid',
  'auth_time',
  'resources',
  'dpop_jkt',
] as const

export const CODE_COLUMNS = columnList(CODE_COLUMN_NAMES)

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
  resources: z.string().nullable(),
  dpop_jkt: z.string().nullable(),
})

/**
 * A code as the values of its row, in CODE_COLUMNS order: the claims as JSON text, absent fields
 * NULL, the resources space-separated (a resource URI holds no space). The nonce comes from the client verbatim, and is stored as `verbatim` says.
 */
export function codeValues(code: AuthorizationCodeRecord, verbatim: Verbatim): unknown[] {
  return [
    code.tenant,
    code.codeHash,
    code.clientId,
    code.redirectUri,
    code.codeChallenge ?? null,
    code.scope,
    code.sub,
    JSON.stringify(code.claims),
    code.createdAt,
    code.expiresAt,
    code.consumedAt ?? null,
    code.nonce === undefined ? null : verbatim(code.nonce),
    code.sid ?? null,
    code.authTime ?? null,
    code.resources === undefined ? null : code.resources.join(' '),
    code.dpopJkt ?? null,
  ]
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
  if (r.resources !== null) code.resources = r.resources.split(' ')
  if (r.dpop_jkt !== null) code.dpopJkt = r.dpop_jkt
  return code
}
