import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { KeyError } from '../errors.js'
import { MIN_SECRET_LENGTH } from '../signer.js'

/**
 * Private keys at rest (KEY_ENCRYPTION_SECRET, see docs/data-at-rest.md): AES-256-GCM envelopes
 * in a versioned text format, `enc:v1:<salt>.<iv>.<ciphertext>.<tag>`, each part base64url.
 *
 * - The AES key is HKDF-SHA256 of the secret with a fresh 16-byte salt per envelope, so no two
 *   envelopes share a key and a 96-bit random IV can never repeat under one. HKDF, not a password
 *   hash: the secret must be random (at least 32 characters, as for JWT_SECRET), which makes a
 *   slow derivation pointless and keeps decrypting every key at start cheap.
 * - The tenant and kid are the additional authenticated data: an envelope copied onto another
 *   key's row does not decrypt there.
 * - A text that does not start with `enc:` is a plaintext JWK stored before a secret was set.
 */
const PREFIX = 'enc:'
const V1 = 'enc:v1:'
const SALT_BYTES = 16
const IV_BYTES = 12
const TAG_BYTES = 16
const HKDF_INFO = 'tessera private key v1'

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
  return stored.startsWith(PREFIX)
}

function aad(tenant: string, kid: string): Buffer {
  // JSON keeps the pair unambiguous whatever characters a tenant name holds.
  return Buffer.from(JSON.stringify(['tessera-private-key', tenant, kid]), 'utf8')
}

function deriveKey(secret: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, HKDF_INFO, 32))
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
  const ikm = secret === undefined ? undefined : Buffer.from(secret, 'utf8')

  return {
    encrypts: ikm !== undefined,

    seal(plaintext, tenant, kid) {
      if (ikm === undefined) return plaintext
      const salt = randomBytes(SALT_BYTES)
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', deriveKey(ikm, salt), iv, {
        authTagLength: TAG_BYTES,
      })
      cipher.setAAD(aad(tenant, kid))
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const parts = [salt, iv, ciphertext, cipher.getAuthTag()]
      return V1 + parts.map((part) => part.toString('base64url')).join('.')
    },

    open(stored, tenant, kid) {
      if (!isSealed(stored)) return stored
      if (!stored.startsWith(V1)) {
        throw new KeyError(
          'ERR_KEY_INVALID',
          `the private key of stored ${where(tenant, kid)} is an envelope of an unknown version`,
        )
      }
      if (ikm === undefined) {
        throw new KeyError(
          'ERR_KEY_DECRYPT',
          `the stored keys of tenant "${tenant}" are encrypted (key "${kid}"); ` +
            'set KEY_ENCRYPTION_SECRET to the secret they were written with',
        )
      }
      const parts = stored
        .slice(V1.length)
        .split('.')
        .map((part) => (/^[A-Za-z0-9_-]+$/.test(part) ? Buffer.from(part, 'base64url') : undefined))
      const [salt, iv, ciphertext, tag] = parts
      if (
        parts.length !== 4 ||
        salt?.length !== SALT_BYTES ||
        iv?.length !== IV_BYTES ||
        ciphertext === undefined ||
        tag?.length !== TAG_BYTES
      ) {
        throw new KeyError(
          'ERR_KEY_INVALID',
          `the private key of stored ${where(tenant, kid)} is a malformed envelope`,
        )
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', deriveKey(ikm, salt), iv, {
          authTagLength: TAG_BYTES,
        })
        decipher.setAAD(aad(tenant, kid))
        decipher.setAuthTag(tag)
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')
      } catch (cause) {
        // GCM cannot tell a wrong secret from an envelope moved from another key: both fail
        // authentication, and the message names both.
        throw new KeyError(
          'ERR_KEY_DECRYPT',
          `KEY_ENCRYPTION_SECRET does not decrypt the stored keys of tenant "${tenant}" ` +
            `(key "${kid}": a different secret, or an envelope copied from another key)`,
          { cause },
        )
      }
    },
  }
}
