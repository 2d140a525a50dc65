/** Stable codes of {@link KeyError}; switch on these, never on the message. */
export type KeyErrorCode =
  /** An HS256 or key-encryption secret shorter than 32 characters. */
  | 'ERR_SECRET_TOO_SHORT'
  /** A stored key that does not parse or import: corrupted row, mismatched halves, bad JWK. */
  | 'ERR_KEY_INVALID'
  /** A signing key was asked of a ring that holds none (an HS256 tenant). */
  | 'ERR_NO_ACTIVE_KEY'
  /** Creating a key kept losing races against other writers and gave up. */
  | 'ERR_KEY_CONFLICT'
  /**
   * A stored private key is encrypted and the encryption secret is missing, wrong, or the
   * envelope belongs to another key. Raised before anything in the store is changed.
   */
  | 'ERR_KEY_DECRYPT'
  /** `revokeKey` was given a kid the tenant does not have. */
  | 'ERR_KEY_NOT_FOUND'

/**
 * The error thrown by @tessera/keys for bad key material and key-ring failures.
 *
 * Programmer misuse (a wrong argument type) is a `TypeError` instead.
 *
 * @example
 * ```ts
 * try {
 *   createHs256Signer(secret)
 * } catch (error) {
 *   if (error instanceof KeyError && error.code === 'ERR_SECRET_TOO_SHORT') process.exit(1)
 *   throw error
 * }
 * ```
 */
export class KeyError extends Error {
  /** Stable machine-readable code. */
  readonly code: KeyErrorCode

  /**
   * @param code - stable code of the failure
   * @param message - human-readable detail; never contains key material
   * @param options - `cause` carries the underlying error
   */
  constructor(code: KeyErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'KeyError'
    this.code = code
  }
}
