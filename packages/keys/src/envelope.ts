/**
 * AES-256-GCM envelopes for everything sealed at rest with KEY_ENCRYPTION_SECRET: the private
 * keys of the key rings, and the parse results of tenant files (see docs/data-at-rest.md). Kept
 * apart from the package's index, with nothing but node:crypto, for the issuer's thread that
 * seals parse results.
 *
 * One text format: `enc:v1:<salt>.<iv>.<ciphertext>.<tag>`, each part base64url.
 *
 * - The AES key is HKDF-SHA256 of the secret with the 16-byte salt and the purpose's own info.
 *   HKDF, not a password hash: the secret must be random (at least 32 characters, as for
 *   JWT_SECRET), which makes a slow derivation pointless and keeps opening at start cheap.
 * - What the value belongs to is the additional authenticated data (the purpose, then the tenant
 *   and kid of a key, or the digest of a file): an envelope copied onto another row, or from one
 *   purpose to another, does not open there.
 * - The IV is random (96 bits), the tag 128 bits. A private key gets a salt of its own, so no
 *   two envelopes share a key. Parse results are sealed by the thousand and opened at every
 *   start: one sealer's envelopes share its salt, so that opening them derives one key per run
 *   that sealed them, not one per file; under one key, random IVs stay safe far beyond the
 *   2^32 envelopes NIST allows.
 *
 * The parse cache's first envelopes, `v1.<iv>.<ciphertext>.<tag>` under one key for all (HKDF
 * with a fixed salt; the file's digest as the additional data), are opened, never written.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/** What a sealed value is: it chooses the derived key and heads the additional data. */
export type EnvelopePurpose = 'private-key' | 'parsed-configuration'

interface PurposeRules {
  /** HKDF info. */
  info: string
  /** The first item of the additional data. */
  label: string
  /** A fresh salt for every envelope (or one per sealer). */
  saltPerEnvelope: boolean
}

const PURPOSES: Record<EnvelopePurpose, PurposeRules> = {
  'private-key': {
    info: 'tessera private key v1',
    label: 'tessera-private-key',
    saltPerEnvelope: true,
  },
  'parsed-configuration': {
    info: 'tessera parsed configuration v1',
    label: 'tessera-parsed-configuration',
    saltPerEnvelope: false,
  },
}

const PREFIX = 'enc:'
const V1 = 'enc:v1:'
const SALT_BYTES = 16
const IV_BYTES = 12
const TAG_BYTES = 16
/** Derived keys a sealer keeps for opening, by salt; past this many it starts over. */
const KEYS_KEPT = 64

/** The parse cache's first format: one key for every entry, the digest as additional data. */
const FIRST_PARSE_CACHE = {
  prefix: 'v1.',
  salt: 'tessera parsed configuration',
  info: 'aes-256-gcm v1',
}

/** Stable codes of {@link EnvelopeError}. */
export type EnvelopeErrorCode =
  /** Not an envelope of a known version. */
  | 'ERR_ENVELOPE_VERSION'
  /** An envelope whose parts are missing or of the wrong size. */
  | 'ERR_ENVELOPE_MALFORMED'
  /** Authentication failed: another secret, another row's envelope, or tampering. */
  | 'ERR_ENVELOPE_OPEN'

/** An envelope that does not open; the message never holds the secret or the plaintext. */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError'
  readonly code: EnvelopeErrorCode

  constructor(code: EnvelopeErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}

/** Seals and opens the values of one purpose under one secret. */
export interface Sealer {
  /** The envelope of `plaintext`, bound to `context` (tenant and kid, or a file's digest). */
  seal(plaintext: string, context: readonly string[]): string
  /**
   * The plaintext of an envelope sealed with the same secret, purpose and `context`.
   *
   * @throws EnvelopeError
   */
  open(sealed: string, context: readonly string[]): string
}

/** Whether a stored value is an envelope of this module's format (`enc:…`), of any version. */
export function isEnvelope(stored: string): boolean {
  return stored.startsWith(PREFIX)
}

/** Whether an envelope (see {@link isEnvelope}) is of a version this module opens. */
export function isKnownEnvelopeVersion(stored: string): boolean {
  return stored.startsWith(V1)
}

function additionalData(label: string, context: readonly string[]): Buffer {
  // JSON keeps the items unambiguous whatever characters they hold.
  return Buffer.from(JSON.stringify([label, ...context]), 'utf8')
}

function decode(part: string | undefined): Buffer | undefined {
  return part !== undefined && /^[A-Za-z0-9_-]+$/.test(part)
    ? Buffer.from(part, 'base64url')
    : undefined
}

function decrypt(key: Buffer, iv: Buffer, ciphertext: Buffer, tag: Buffer, aad: Buffer): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(aad)
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')
  } catch (cause) {
    // GCM cannot tell a wrong secret from an envelope moved from elsewhere: both fail
    // authentication.
    throw new EnvelopeError('ERR_ENVELOPE_OPEN', 'the envelope does not open', { cause })
  }
}

/** A sealer for `purpose` over `secret` (KEY_ENCRYPTION_SECRET). */
export function createSealer(secret: string, purpose: EnvelopePurpose): Sealer {
  if (typeof secret !== 'string') throw new TypeError('secret must be a string')
  const rules = PURPOSES[purpose]
  const ikm = Buffer.from(secret, 'utf8')
  const derive = (salt: Buffer): Buffer =>
    Buffer.from(hkdfSync('sha256', ikm, salt, rules.info, 32))
  const kept = new Map<string, Buffer>()
  const keyOf = (salt: Buffer): Buffer => {
    const id = salt.toString('base64url')
    let key = kept.get(id)
    if (key === undefined) {
      if (kept.size >= KEYS_KEPT) kept.clear()
      key = derive(salt)
      kept.set(id, key)
    }
    return key
  }
  const sealerSalt = rules.saltPerEnvelope ? undefined : randomBytes(SALT_BYTES)
  let firstParseCacheKey: Buffer | undefined

  const openFirstParseCache = (sealed: string, context: readonly string[]): string => {
    const parts = sealed.slice(FIRST_PARSE_CACHE.prefix.length).split('.').map(decode)
    const [iv, ciphertext, tag] = parts
    if (parts.length !== 3 || iv === undefined || ciphertext === undefined || tag === undefined) {
      throw new EnvelopeError('ERR_ENVELOPE_MALFORMED', 'the envelope is malformed')
    }
    firstParseCacheKey ??= Buffer.from(
      hkdfSync('sha256', ikm, FIRST_PARSE_CACHE.salt, FIRST_PARSE_CACHE.info, 32),
    )
    // Its context is the file's digest alone.
    const digest = Buffer.from(context[0] ?? '', 'utf8')
    return decrypt(firstParseCacheKey, iv, ciphertext, tag, digest)
  }

  return {
    seal(plaintext, context) {
      const salt = sealerSalt ?? randomBytes(SALT_BYTES)
      const key = sealerSalt === undefined ? derive(salt) : keyOf(salt)
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(additionalData(rules.label, context))
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const parts = [salt, iv, ciphertext, cipher.getAuthTag()]
      return V1 + parts.map((part) => part.toString('base64url')).join('.')
    },

    open(sealed, context) {
      if (purpose === 'parsed-configuration' && sealed.startsWith(FIRST_PARSE_CACHE.prefix)) {
        return openFirstParseCache(sealed, context)
      }
      if (!isKnownEnvelopeVersion(sealed)) {
        throw new EnvelopeError('ERR_ENVELOPE_VERSION', 'the envelope is of an unknown version')
      }
      const parts = sealed.slice(V1.length).split('.').map(decode)
      const [salt, iv, ciphertext, tag] = parts
      if (
        parts.length !== 4 ||
        salt?.length !== SALT_BYTES ||
        iv?.length !== IV_BYTES ||
        ciphertext === undefined ||
        tag?.length !== TAG_BYTES
      ) {
        throw new EnvelopeError('ERR_ENVELOPE_MALFORMED', 'the envelope is malformed')
      }
      const key = rules.saltPerEnvelope ? derive(salt) : keyOf(salt)
      return decrypt(key, iv, ciphertext, tag, additionalData(rules.label, context))
    },
  }
}
