import type { FailureCount } from '@tessera/grants'
import type { StoredKey } from '@tessera/keys'
import * as z from 'zod'
import { StoreError } from '../errors.js'

const KeyRowSchema = z.object({
  tenant: z.string(),
  kid: z.string(),
  alg: z.literal('RS256'),
  public_jwk: z.string(),
  private_key: z.string(),
  created_at: z.int(),
  state: z.enum(['active', 'retired', 'revoked']),
  retired_at: z.int().nullable(),
})

const ThrottleRowSchema = z.object({
  count: z.int().positive(),
  reset_at: z.int(),
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
  return key
}

/** A `count, reset_at` pair of the throttle table as a FailureCount. */
export function parseThrottleRow(row: unknown): FailureCount {
  const result = ThrottleRowSchema.safeParse(row)
  if (!result.success) throw invalid('a throttle row', result.error)
  return { count: result.data.count, resetAt: result.data.reset_at }
}
