import * as z from 'zod'
import { StoreError } from '../../errors.js'

/**
 * How a dialect stores text a client chose verbatim, which may hold U+0000: SQLite as TEXT, as
 * it is; PostgreSQL as BYTEA, its UTF-8 bytes (TEXT cannot hold U+0000).
 */
export type Verbatim = (text: string) => string | Buffer

/** SQLite's {@link Verbatim}: the text itself. */
export const asText: Verbatim = (text) => text

/** A column list for SELECT and INSERT: `tenant, kid, alg`. */
export function columnList(columns: readonly string[]): string {
  return columns.join(', ')
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A TEXT column holding a JSON object; the parsed object is kept as JSON.parse built it. */
export const ClaimsSchema = z
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

/** The error for a row that does not parse: paths and messages, never the values. */
export function invalid(what: string, error: z.ZodError): StoreError {
  // Paths and messages only: a row of the keys table holds private key material.
  const issues = error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
  return new StoreError('ERR_STORE_ROW_INVALID', `${what} is invalid: ${issues.join('; ')}`)
}
