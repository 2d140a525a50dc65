import { createSealer, EnvelopeError, isEnvelope, isKnownEnvelopeVersion } from '../envelope.js'
import type { Sealer } from '../envelope.js'
import { KeyError } from '../errors.js'
import { MIN_SECRET_LENGTH } from '../signer.js'

/**
 * Private keys at rest (KEY_ENCRYPTION_SECRET, see docs/data-at-rest.md): the `private-key`
 * envelopes of envelope.ts, `enc:v1:<salt>.<iv>.<ciphertext>.<tag>`, bound to the tenant and
 * kid. A text that does not start with `enc:` is a plaintext JWK stored before a secret was set.
 */

/** Seals and opens stored private keys of one process's secret (or of none). */
export interface KeyCipher {
  /** Whether {@link KeyCipher.seal} encrypts (a secret is set). */
  readonly encrypts: boolean
  /** The text to store for a private JWK: an envelope, or the plaintext when no secret is set. */
  seal(plaintext: string, tenant: string, kid: string): string
  /** The private JWK text of a stored value, envelope or plaintext. */
  open(stored: string, tenant: string, kid: string): string
}

/** Whether a stored private key is an envelope rather than plaintext. */
export function isSealed(stored: string): boolean {
  return isEnvelope(stored)
}

function where(tenant: string, kid: string): string {
  return `key "${kid}" of tenant "${tenant}"`
}

/**
 * A cipher over `secret` (KEY_ENCRYPTION_SECRET), or a pass-through one when it is undefined.
 *
 * @throws KeyError `ERR_SECRET_TOO_SHORT` for a secret shorter than 32 characters
 */
export function createKeyCipher(secret: string | undefined): KeyCipher {
  if (secret !== undefined && typeof secret !== 'string') {
    throw new TypeError('encryptionSecret must be a string')
  }
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    // The length only: the secret itself must never reach a log.
    throw new KeyError(
      'ERR_SECRET_TOO_SHORT',
      `the key encryption secret has ${secret.length} characters; at least ${MIN_SECRET_LENGTH} are required`,
    )
  }
  const sealer: Sealer | undefined =
    secret === undefined ? undefined : createSealer(secret, 'private-key')

  return {
    encrypts: sealer !== undefined,

    seal(plaintext, tenant, kid) {
      return sealer === undefined ? plaintext : sealer.seal(plaintext, [tenant, kid])
    },

    open(stored, tenant, kid) {
      if (!isSealed(stored)) return stored
      if (!isKnownEnvelopeVersion(stored)) {
        throw new KeyError(
          'ERR_KEY_INVALID',
          `the private key of stored ${where(tenant, kid)} is an envelope of an unknown version`,
        )
      }
      if (sealer === undefined) {
        throw new KeyError(
          'ERR_KEY_DECRYPT',
          `the stored keys of tenant "${tenant}" are encrypted (key "${kid}"); ` +
            'set KEY_ENCRYPTION_SECRET to the secret they were written with',
        )
      }
      try {
        return sealer.open(stored, [tenant, kid])
      } catch (error) {
        if (!(error instanceof EnvelopeError)) throw error
        if (error.code !== 'ERR_ENVELOPE_OPEN') {
          throw new KeyError(
            'ERR_KEY_INVALID',
            `the private key of stored ${where(tenant, kid)} is a malformed envelope`,
          )
        }
        // GCM cannot tell a wrong secret from an envelope moved from another key: both fail
        // authentication, and the message names both.
        throw new KeyError(
          'ERR_KEY_DECRYPT',
          `KEY_ENCRYPTION_SECRET does not decrypt the stored keys of tenant "${tenant}" ` +
            `(key "${kid}": a different secret, or an envelope copied from another key)`,
          { cause: error.cause },
        )
      }
    },
  }
}
