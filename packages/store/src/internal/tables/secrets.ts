import * as z from 'zod'
import { invalid } from './shared.js'

const SecretRowSchema = z.object({ value: z.string().min(1) })

/** A row of `secrets` as its value; the name is never part of a message. */
export function parseSecretRow(row: unknown): string {
  const result = SecretRowSchema.safeParse(row)
  if (!result.success) throw invalid('a secrets row', result.error)
  return result.data.value
}
