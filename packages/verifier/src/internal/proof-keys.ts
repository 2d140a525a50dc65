import { calculateJwkThumbprint, decodeProtectedHeader, importJWK } from 'jose'
import type { JWK, KeyLike } from 'jose'
import { DPOP_ACCEPTED_ALGORITHMS } from './dpop-options.js'
import { VerifierError } from '../errors.js'

/** An `ERR_DPOP_PROOF_INVALID` refusal, answered in the DPoP scheme. */
export function invalid(message: string, claim?: string, cause?: unknown): VerifierError {
  return new VerifierError('ERR_DPOP_PROOF_INVALID', message, {
    scheme: 'DPoP',
    ...(claim === undefined ? {} : { claim }),
    ...(cause === undefined ? {} : { cause }),
  })
}

/** The key of a proof's header, imported, and its RFC 7638 thumbprint. */
export interface ProofKey {
  key: KeyLike
  jkt: string
}

// The members that make a JWK private or symmetric (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

// Enough for the clients active at once on one instance; a flood of distinct headers only clears
// it, which costs what no cache would.
const MAX_CACHED_KEYS = 1024

/** Checks the header of a proof: an accepted `alg` and one public, asymmetric `jwk`. */
function checkHeader(proof: string): { alg: string; jwk: JWK } {
  let header: Record<string, unknown>
  try {
    header = decodeProtectedHeader(proof)
  } catch (error) {
    throw invalid('The DPoP proof header is malformed', undefined, error)
  }
  const { alg, jwk } = header
  if (typeof alg !== 'string' || !(DPOP_ACCEPTED_ALGORITHMS as readonly string[]).includes(alg)) {
    throw invalid('The DPoP proof algorithm is not accepted', 'alg')
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw invalid('The DPoP proof header has no jwk', 'jwk')
  }
  if (PRIVATE_MEMBERS.some((member) => Object.hasOwn(jwk, member))) {
    throw invalid('The DPoP proof jwk must be a public key', 'jwk')
  }
  // The key must be of the algorithm's type; EdDSA with Ed25519 only, as RFC 9449 lists it
  // (jose would also take Ed448), and Ed25519, its fully specified name, the same.
  const { kty, crv } = jwk as { kty?: unknown; crv?: unknown }
  const fits =
    alg === 'ES256'
      ? kty === 'EC' && crv === 'P-256'
      : alg === 'EdDSA' || alg === 'Ed25519'
        ? kty === 'OKP' && crv === 'Ed25519'
        : kty === 'RSA'
  if (!fits) {
    throw invalid(`The DPoP proof jwk is not a key for ${alg}`, 'jwk')
  }
  return { alg, jwk: jwk as JWK }
}

/**
 * The keys of proof headers, by the header's base64url segment. A client signs every proof with
 * one key under one header (`typ`, `alg`, `jwk`), byte for byte, so importing that key (the
 * dearest step after the signature check) and hashing its thumbprint are done once per header;
 * the result is a pure function of the segment's bytes.
 */
export class ProofKeyCache {
  readonly #keys = new Map<string, ProofKey>()

  /** The checked, imported key of `proof`'s header. Rejects with `ERR_DPOP_PROOF_INVALID`. */
  async of(proof: string): Promise<ProofKey> {
    const segment = proof.slice(0, proof.indexOf('.'))
    const known = this.#keys.get(segment)
    if (known !== undefined) return known
    const { alg, jwk } = checkHeader(proof)
    let key: KeyLike | Uint8Array
    let jkt: string
    try {
      key = await importJWK({ ...jwk, ext: true }, alg)
      jkt = await calculateJwkThumbprint(jwk)
    } catch (error) {
      throw invalid('The DPoP proof jwk is not a usable key', 'jwk', error)
    }
    if (key instanceof Uint8Array || key.type !== 'public') {
      throw invalid('The DPoP proof jwk must be a public key', 'jwk')
    }
    if (this.#keys.size >= MAX_CACHED_KEYS) this.#keys.clear()
    const entry = { key, jkt }
    this.#keys.set(segment, entry)
    return entry
  }
}
