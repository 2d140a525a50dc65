/**
 * The key id of a key generated at `epochMs`: its UTC date, `YYYY-MM-DD`.
 *
 * @param epochMs - epoch milliseconds
 * @example
 * ```ts
 * kidForDate(Date.UTC(2025, 0, 31, 23, 59)) // '2025-01-31'
 * ```
 */
export function kidForDate(epochMs: number): string {
  if (!Number.isFinite(epochMs)) {
    throw new TypeError('kidForDate: epochMs must be a finite number of milliseconds')
  }
  return new Date(epochMs).toISOString().slice(0, 10)
}
