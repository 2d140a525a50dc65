/**
 * @tessera/keys — token signing keys: the HS256 shared secret, per-tenant RS256 key pairs, their
 * rotation and the published JWKS. Persistence goes through the {@link KeyStore} port; adapters
 * live in @tessera/store.
 *
 * @example
 * ```ts
 * import { createHs256Signer, loadKeyRing, rotateKey } from '@tessera/keys'
 *
 * const ring = await loadKeyRing({ tenant: 'acme', algorithm: 'RS256', store: store.keys,
 *   now: Date.now, rotateOnRestart: true, graceMs: 4 * 3_600_000,
 *   encryptionSecret: process.env.KEY_ENCRYPTION_SECRET })
 * const signer = ring.algorithm === 'RS256' ? ring.signer() : createHs256Signer(secret) // first
 * // signature makes the first key; the JWKS route awaits ring.ensureKey()
 * await rotateKey({ tenant: 'acme', store: store.keys, now: Date.now }) // then ring.reload()
 * ```
 *
 * @module
 */
export { KeyError } from './errors.js'
export type { KeyErrorCode } from './errors.js'
export { kidForDate } from './kid.js'
export { generateRsaKey } from './generate.js'
export { createHs256Signer, MIN_SECRET_LENGTH } from './signer.js'
export type { SigningAlgorithm, SignedToken, TokenSigner } from './signer.js'
export { createJwks, isPublished } from './jwks.js'
export type { JwksDocument, PublicationOptions, RsaPublicJwk } from './jwks.js'
export { loadKeyRing, verifyStoredKeys } from './key-ring.js'
export type {
  KeyMakeReason,
  KeyRing,
  KeyRingEvent,
  LoadKeyRingOptions,
  VerifyStoredKeysOptions,
} from './key-ring.js'
export { rotateKey, revokeKey } from './rotation.js'
export type {
  RevokeKeyOptions,
  RevokeKeyResult,
  RotateKeyOptions,
  RotateKeyResult,
} from './rotation.js'
export { readKeys } from './key-info.js'
export type { KeyInfo, ReadKeysOptions } from './key-info.js'
export { hs256SwitchTime, recordTenantAlgorithms } from './algorithm-history.js'
export type { RecordTenantAlgorithmsOptions } from './algorithm-history.js'
export { createAccessTokenVerifier } from './verify.js'
export type { AccessTokenVerifierOptions } from './verify.js'
export type {
  KeyChanges,
  KeyState,
  KeyStore,
  StoredKey,
  TenantAlgorithmRecord,
  TenantAlgorithmStore,
} from './ports.js'
export type { JWTPayload } from 'jose'
