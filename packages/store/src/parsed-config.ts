/** One cached parse result: `key` a SHA-256 hex digest, `value` an opaque (sealed) text. */
export interface ParsedConfigEntry {
  readonly key: string
  readonly value: string
}

/**
 * A cache of parse results of tenant files, shared by every replica on one database. Keys are
 * content digests, so an entry never goes stale: it is only ever missing or unused.
 */
export interface ParsedConfigStore {
  /** Every entry stored, in no particular order. */
  list(): Promise<ParsedConfigEntry[]>
  /**
   * Stores the entries (the first of a key given twice), all in one transaction, stamped `now`
   * (ms since epoch); a key already stored takes the new value and stamp. Resolves with how many
   * were written. Replacing, not insert-if-absent: an entry the issuer cannot open (sealed with
   * another secret, damaged) must give way to the one it made instead.
   */
  add(entries: readonly ParsedConfigEntry[], now: number): Promise<number>
  /**
   * Deletes the entries stamped before `before` whose key is not in `keep`, and resolves with
   * how many were deleted. `keep` may hold tens of thousands of keys.
   */
  prune(keep: ReadonlySet<string>, before: number): Promise<number>
}
