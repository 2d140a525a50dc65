/**
 * The `dynamic_clients` section of a tenant: clients the tenant file does not list, which
 * register themselves (RFC 7591) or name themselves by an https URL (client ID metadata
 * documents).
 *
 * @module
 */
import * as z from 'zod'
import { MIN_CLIENT_SECRET_LENGTH } from './internal/fields.js'
import { ScopeListSchema, secretSchema, strictObject } from './internal/schema-parts.js'

/** The default of `max_registrations`: live registrations per tenant. */
export const DEFAULT_MAX_REGISTRATIONS = 10_000

/** `dynamic_clients` as written; the registration token is resolved by `parseConfig`. */
export const DynamicClientsSchema = strictObject({
  registration: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .describe('POST /register (RFC 7591) and its management (RFC 7592); default false'),
  registration_token: secretSchema(
    z
      .string()
      .min(MIN_CLIENT_SECRET_LENGTH, `must be at least ${MIN_CLIENT_SECRET_LENGTH} characters`),
  )
    .optional()
    .describe('Initial access token POST /register requires; absent: open registration'),
  metadata_documents: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .describe('Accept https client_id URLs (client ID metadata documents); default false'),
  scopes: ScopeListSchema.optional().describe(
    'The scopes such clients may get; required when registration or metadata_documents is on',
  ),
  max_registrations: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(10_000_000, 'must be at most 10000000')
    .default(DEFAULT_MAX_REGISTRATIONS)
    .describe(`Live registrations per tenant; default ${DEFAULT_MAX_REGISTRATIONS}`),
}).superRefine((section, ctx) => {
  const on = section.registration || section.metadata_documents
  if (on && (section.scopes === undefined || section.scopes.length === 0)) {
    ctx.addIssue({
      code: 'custom',
      message: 'scopes is required when registration or metadata_documents is on',
      path: ['scopes'],
    })
  }
  if (section.registration_token !== undefined && !section.registration) {
    ctx.addIssue({
      code: 'custom',
      message: 'registration_token needs registration: true',
      path: ['registration_token'],
    })
  }
})
