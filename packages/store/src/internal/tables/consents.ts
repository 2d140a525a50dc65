import type { ConsentRecord } from '@tessera/grants'
import * as z from 'zod'
import { columnList, invalid } from './shared.js'

/** The columns of `consents`, in the order of {@link consentValues}. */
export const CONSENT_COLUMN_NAMES = [
  'tenant',
  'subject',
  'client_id',
  'resources',
  'scopes',
  'expires_at',
] as const

export const CONSENT_COLUMNS = columnList(CONSENT_COLUMN_NAMES)

const ConsentRowSchema = z.object({
  tenant: z.string(),
  subject: z.string(),
  client_id: z.string(),
  resources: z.string(),
  scopes: z.string(),
  expires_at: z.int(),
})

/**
 * A consent as the values of its row, in CONSENT_COLUMNS order: the scopes space-separated (a
 * scope token holds no space), `''` for none.
 */
export function consentValues(consent: ConsentRecord): unknown[] {
  return [
    consent.tenant,
    consent.subject,
    consent.clientId,
    consent.resources,
    consent.scopes.join(' '),
    consent.expiresAt,
  ]
}

/** The scopes of a `scopes` column: `''` is none. */
export function splitScopes(text: string): string[] {
  return text === '' ? [] : text.split(' ')
}

/** A row of `consents`. */
export function parseConsentRow(row: unknown): ConsentRecord {
  const result = ConsentRowSchema.safeParse(row)
  if (!result.success) throw invalid('a consents row', result.error)
  const r = result.data
  return {
    tenant: r.tenant,
    subject: r.subject,
    clientId: r.client_id,
    resources: r.resources,
    scopes: splitScopes(r.scopes),
    expiresAt: r.expires_at,
  }
}
