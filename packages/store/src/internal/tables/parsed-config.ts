import * as z from 'zod'
import type { ParsedConfigEntry } from '../../parsed-config.js'
import { invalid } from './shared.js'

const ParsedConfigRowSchema = z.object({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  value: z.string(),
})

/** A row of `parsed_config` as its entry; the value, sealed or not, is never part of a message. */
export function parseParsedConfigRow(row: unknown): ParsedConfigEntry {
  const result = ParsedConfigRowSchema.safeParse(row)
  if (!result.success) throw invalid('a parsed_config row', result.error)
  return { key: result.data.key, value: result.data.value }
}
