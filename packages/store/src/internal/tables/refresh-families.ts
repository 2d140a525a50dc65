import type { RefreshFamily } from '@tessera/grants'
import * as z from 'zod'
import { ClaimsSchema, columnList, invalid } from './shared.js'

/** The columns of `refresh_families`, in the order of {@link familyValues}. */
export const FAMILY_COLUMN_NAMES = [
  'tenant',
  'family_id',
  'client_id',
  'sub',
  'scope',
  'claims',
  'code_hash',
  'sid',
  'auth_time',
  'created_at',
  'expires_at',
  'revoked_at',
  'resources',
  'dpop_jkt',
] as const

export const FAMILY_COLUMNS = columnList(FAMILY_COLUMN_NAMES)

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
  resources: z.string().nullable(),
  dpop_jkt: z.string().nullable(),
})

/** A family as the values of its row, in FAMILY_COLUMNS order: claims as JSON, resources space-separated, absent as NULL. */
export function familyValues(family: RefreshFamily): unknown[] {
  return [
    family.tenant,
    family.familyId,
    family.clientId,
    family.sub,
    family.scope,
    JSON.stringify(family.claims),
    family.codeHash ?? null,
    family.sid ?? null,
    family.authTime ?? null,
    family.createdAt,
    family.expiresAt,
    family.revokedAt ?? null,
    family.resources === undefined ? null : family.resources.join(' '),
    family.dpopJkt ?? null,
  ]
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
  if (r.resources !== null) family.resources = r.resources.split(' ')
  if (r.dpop_jkt !== null) family.dpopJkt = r.dpop_jkt
  return family
}
