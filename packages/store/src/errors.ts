/** Stable codes of {@link StoreError}; switch on these, never on the message. */
export type StoreErrorCode =
  /** A DATABASE_URL that names no supported store. */
  | 'ERR_STORE_URL'
  /** The database could not be opened or migrated. */
  | 'ERR_STORE_OPEN'
  /**
   * An open store lost its database for this call (connection refused, dropped or timed out):
   * nothing was changed, and the same call may succeed later. HTTP answers it with 503.
   */
  | 'ERR_STORE_UNAVAILABLE'
  /** A row read back does not have the expected shape: a corrupted or foreign database. */
  | 'ERR_STORE_ROW_INVALID'
  /** The store was used after `close()`. */
  | 'ERR_STORE_CLOSED'
  /**
   * A save whose key (code hash, token hash or family id) is already taken within the
   * tenant. Hashes of random values never collide, so this means a broken id or token source.
   */
  | 'ERR_STORE_CONFLICT'

/**
 * The error thrown by @tessera/store. Messages never echo credentials from a DATABASE_URL.
 *
 * @example
 * ```ts
 * try {
 *   await openStore(process.env.DATABASE_URL ?? 'sqlite:./data/tessera.db')
 * } catch (error) {
 *   if (error instanceof StoreError) console.error(error.message)
 *   throw error
 * }
 * ```
 */
export class StoreError extends Error {
  /** Stable machine-readable code. */
  readonly code: StoreErrorCode

  /**
   * @param code - stable code of the failure
   * @param message - human-readable detail, safe to log
   * @param options - `cause` carries the driver's error
   */
  constructor(code: StoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StoreError'
    this.code = code
  }
}
