import * as z from 'zod'
import { invalid } from './shared.js'

const WindowRowSchema = z.object({ count: z.int(), reset_at: z.int() })

/**
 * A row of `throttle` or `client_auth_failures`: how many attempts its window holds, and when it
 * ends.
 */
export function parseWindow(row: unknown): { count: number; resetAt: number } {
  const result = WindowRowSchema.safeParse(row)
  if (!result.success) throw invalid('a throttle row', result.error)
  return { count: result.data.count, resetAt: result.data.reset_at }
}
