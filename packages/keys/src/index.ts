/**
 * @tessera/keys — token signing keys: the HS256 shared secret, per-tenant RS256 key pairs, their
 * rotation and the published JWKS. Persistence goes through the {@link KeyStore} port; adapters
 * live in @tessera/store.
 *
 * @example
 * ```ts
 * import { createHs256Signer, loadKeyRing } from '@tessera/keys'
 *
 * const ring = await loadKeyRing({ tenant: 'acme', algorithm: 'RS256', store: store.keys,
 *   now: Date.now, rotateOnRestart: true, graceMs: 4 * 3_600_000 })
 * const signer = ring.algorithm === 'RS256' ? ring.signer() : createHs256Signer(secret)
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
export { loadKeyRing } from './key-ring.js'
export { createAccessTokenVerifier } from './verify.js'
export type { AccessTokenVerifierOptions } from './verify.js'
export type { KeyRing, LoadKeyRingOptions } from './key-ring.js'
export type { KeyState, KeyStore, StoredKey } from './ports.js'
export type { JWTPayload } from 'jose'
