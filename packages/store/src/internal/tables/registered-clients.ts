import type { RegisteredClientRecord } from '@tessera/grants'
import * as z from 'zod'
import { ClaimsSchema, columnList, invalid } from './shared.js'

/** The columns of `registered_clients`, in the order of {@link registeredClientValues}. */
export const REGISTERED_CLIENT_COLUMN_NAMES = [
  'tenant',
  'client_id',
  'secret_hash',
  'registration_token_hash',
  'metadata',
  'created_at',
  'updated_at',
] as const

export const REGISTERED_CLIENT_COLUMNS = columnList(REGISTERED_CLIENT_COLUMN_NAMES)

const RegisteredClientRowSchema = z.object({
  tenant: z.string(),
  client_id: z.string(),
  secret_hash: z.string().nullable(),
  registration_token_hash: z.string(),
  // A JSON object, as the claims of a code are.
  metadata: ClaimsSchema,
  created_at: z.int(),
  updated_at: z.int(),
})

/**
 * A registration as the values of its row, in REGISTERED_CLIENT_COLUMNS order: the metadata as
 * JSON text, an absent secret hash NULL.
 */
export function registeredClientValues(record: RegisteredClientRecord): unknown[] {
  return [
    record.tenant,
    record.clientId,
    record.secretHash ?? null,
    record.registrationTokenHash,
    JSON.stringify(record.metadata),
    record.createdAt,
    record.updatedAt,
  ]
}

/** A row of `registered_clients`; a NULL `secret_hash` leaves `secretHash` out. */
export function parseRegisteredClientRow(row: unknown): RegisteredClientRecord {
  const result = RegisteredClientRowSchema.safeParse(row)
  // Paths and messages only (see invalid): never a hash or the metadata.
  if (!result.success) throw invalid('a registered_clients row', result.error)
  const r = result.data
  const record: RegisteredClientRecord = {
    tenant: r.tenant,
    clientId: r.client_id,
    registrationTokenHash: r.registration_token_hash,
    metadata: r.metadata,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }
  if (r.secret_hash !== null) record.secretHash = r.secret_hash
  return record
}
