import type { SessionRecord } from '@tessera/grants'
import * as z from 'zod'
import { ClaimsSchema, columnList, invalid } from './shared.js'

/** The columns of `sessions`, in the order of {@link sessionValues}. */
export const SESSION_COLUMN_NAMES = [
  'tenant',
  'id_hash',
  'sid',
  'sub',
  'claims',
  'auth_time',
  'created_at',
  'expires_at',
  'ended_at',
] as const

export const SESSION_COLUMNS = columnList(SESSION_COLUMN_NAMES)

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

/** A session as the values of its row, in SESSION_COLUMNS order: claims as JSON, absent NULL. */
export function sessionValues(session: SessionRecord): unknown[] {
  return [
    session.tenant,
    session.idHash,
    session.sid,
    session.sub,
    JSON.stringify(session.claims),
    session.authTime,
    session.createdAt,
    session.expiresAt,
    session.endedAt ?? null,
  ]
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

const SessionEndRowSchema = z.object({ expires_at: z.int() })

/** The `expires_at` of a session that `endSession` ended: whether it was live is decided on it. */
export function parseSessionEnd(row: unknown): number {
  const result = SessionEndRowSchema.safeParse(row)
  if (!result.success) throw invalid('a sessions row', result.error)
  return result.data.expires_at
}
