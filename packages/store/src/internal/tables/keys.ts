import type { KeyChanges, StoredKey } from '@tessera/keys'
import * as z from 'zod'
import { columnList, invalid } from './shared.js'

/** The columns of `keys`, in the order of {@link keyValues}. */
export const KEY_COLUMN_NAMES = [
  'tenant',
  'kid',
  'alg',
  'public_jwk',
  'private_key',
  'created_at',
  'state',
  'retired_at',
  'signs_from',
] as const

export const KEY_COLUMNS = columnList(KEY_COLUMN_NAMES)

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

/** A StoredKey as the values of a `keys` row, in KEY_COLUMNS order; absent fields are NULL. */
export function keyValues(key: StoredKey): unknown[] {
  return [
    key.tenant,
    key.kid,
    key.alg,
    key.publicJwk,
    key.privateKey,
    key.createdAt,
    key.state,
    key.retiredAt ?? null,
    key.signsFrom ?? null,
  ]
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
