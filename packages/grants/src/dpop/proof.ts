import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors as joseErrors,
  jwtVerify,
} from 'jose'
import type { JWK } from 'jose'
import { sha256, sha256Hex } from '../crypto.js'
import { OAuthError } from '../errors.js'
import type { Clock, MarkStore, SecretStore } from '../ports.js'
import { checkDpopNonce } from './nonce.js'

/** The proof algorithms the issuer accepts (`dpop_signing_alg_values_supported`). */
export const DPOP_SIGNING_ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const

/**
 * The `alg` values a proof may carry: the advertised ones and `Ed25519`, the fully specified
 * name (RFC 9864) of EdDSA with an Ed25519 key, which oauth4webapi 3 signs such keys with. jose
 * refuses any other key type under `Ed25519`.
 */
export const DPOP_ACCEPTED_ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'] as const

/** DPOP_PROOF_MAX_AGE_SECONDS when it is not given. */
export const DEFAULT_DPOP_PROOF_MAX_AGE_SECONDS = 60

/**
 * The longest `DPoP` header read. A proof is a header, a small payload and a signature; with an
 * RSA 4096 key it stays under 2.5 KB, so anything past this is not a proof.
 */
export const MAX_DPOP_PROOF_LENGTH = 8192

/** The mark kind under which a used proof's `jti` is kept until the proof can no longer pass. */
export const DPOP_JTI_MARK = 'dpop'

// Members that only a private or symmetric JWK has (RFC 7518 §6).
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const

/** One request's DPoP header and what its proof must name. */
export interface DpopRequest {
  /** Every `DPoP` header of the request, as received ([] without one). */
  proofs: readonly string[]
  /** The request's method: `htm`. */
  method: string
  /** The endpoint's path (`/token`), appended to the issuer URL or the request origin: `htu`. */
  path: string
  /**
   * The issuer's scheme with the Host the request was sent to (`https://id.acme.test`): `htu`
   * may name it too, for a tenant with several hosts or a client that uses another of them.
   */
  requestOrigin?: string
  /** The access token the proof goes with (/userinfo): its SHA-256 must be the proof's `ath`. */
  accessToken?: string
}

/** The tenant as the proof check needs it. */
export interface DpopTenant {
  name: string
  issuer: string
  /** Server nonces are required (`dpop_nonce: true`). */
  dpopNonce?: boolean
}

/** What the proof check needs of the issuer. */
export interface DpopDeps {
  marks: MarkStore
  secrets: SecretStore
  clock: Clock
  /** DPOP_PROOF_MAX_AGE_SECONDS; DEFAULT_DPOP_PROOF_MAX_AGE_SECONDS when absent. */
  dpopProofMaxAgeSeconds?: number
}

/** A proof that passed every check. */
export interface DpopProof {
  /** The RFC 7638 SHA-256 thumbprint of its key: the `jkt` a bound token names. */
  jkt: string
}

function refuse(description: string, cause?: unknown): OAuthError {
  return new OAuthError('invalid_dpop_proof', description, { cause })
}

/**
 * Checks the request's DPoP proof (RFC 9449 §4.3), and spends its `jti`: undefined when the
 * request has no `DPoP` header.
 *
 * The `jti` is marked in the store after every other check passed, so a proof is accepted once
 * across replicas; it is kept until the proof's `iat` leaves the window, after which the proof
 * fails on its age anyway.
 *
 * @throws OAuthError `invalid_dpop_proof` for any problem with the proof, a replay included;
 *   `use_dpop_nonce` (with the nonce to use) when the tenant requires server nonces and the
 *   proof does not carry the current one
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-4.3
 */
export async function verifyDpopProof(
  request: DpopRequest,
  tenant: DpopTenant,
  deps: DpopDeps,
): Promise<DpopProof | undefined> {
  const { proofs } = request
  if (proofs.length === 0) return undefined
  if (proofs.length > 1) throw refuse('send one DPoP header')
  const proof = proofs[0] ?? ''
  if (proof.length > MAX_DPOP_PROOF_LENGTH) throw refuse('the DPoP proof is too long')
  const jwk = publicJwkOf(proof)
  const maxAge = deps.dpopProofMaxAgeSeconds ?? DEFAULT_DPOP_PROOF_MAX_AGE_SECONDS
  const now = deps.clock()
  let payload: Record<string, unknown>
  try {
    const verified = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: [...DPOP_ACCEPTED_ALGORITHMS],
      currentDate: new Date(now),
    })
    payload = verified.payload
  } catch (error) {
    throw refuse(joseMessage(error), error)
  }
  const { jti, htm, htu, iat } = payload
  if (typeof jti !== 'string' || jti === '') throw refuse('the DPoP proof has no jti')
  if (htm !== request.method) throw refuse(`the DPoP proof's htm is not ${request.method}`)
  if (typeof htu !== 'string' || !htuMatches(htu, request, tenant.issuer)) {
    throw refuse("the DPoP proof's htu is not this endpoint's URL")
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('the DPoP proof has no iat')
  const nowSeconds = now / 1000
  if (Math.abs(nowSeconds - iat) > maxAge) {
    throw refuse("the DPoP proof's iat is too far from the current time")
  }
  if (request.accessToken !== undefined) {
    if (payload.ath !== sha256(request.accessToken).toString('base64url')) {
      throw refuse("the DPoP proof's ath is not the access token's hash")
    }
  }
  if (tenant.dpopNonce === true) await checkDpopNonce(payload.nonce, tenant.name, deps)
  const jkt = await calculateJwkThumbprint(jwk, 'sha256')
  // Kept until the proof is too old to pass; a whole second later, so that the mark outlives
  // every instant at which the proof is still fresh.
  const expiresAt = Math.max(now, Math.ceil((iat + maxAge + 1) * 1000))
  // The id a client chose is hashed: any string, of any length, makes a valid mark id.
  if (!(await deps.marks.mark(tenant.name, DPOP_JTI_MARK, sha256Hex(jti), expiresAt, now))) {
    throw refuse('the DPoP proof was already used')
  }
  return { jkt }
}

/** The proof's `jwk` header when it is a public key: a private member in it refuses the proof. */
function publicJwkOf(proof: string): JWK {
  let header: Record<string, unknown>
  try {
    header = decodeProtectedHeader(proof)
  } catch (error) {
    throw refuse('the DPoP proof is not a JWT', error)
  }
  const { jwk } = header
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw refuse('the DPoP proof has no jwk header')
  }
  if (PRIVATE_MEMBERS.some((member) => Object.hasOwn(jwk, member))) {
    throw refuse("the DPoP proof's jwk is not a public key")
  }
  // EdDSA as RFC 9449 lists it, and as resource servers check it: Ed25519 keys only (jose would
  // also verify Ed448 ones, whose tokens the verifier would then refuse).
  const { alg } = header
  if ((alg === 'EdDSA' || alg === 'Ed25519') && (jwk as { crv?: unknown }).crv !== 'Ed25519') {
    throw refuse("the DPoP proof's jwk is not an Ed25519 key")
  }
  return jwk as JWK
}

/**
 * Whether `htu` names the endpoint: under the issuer URL or under the request's origin,
 * compared as the URL parser normalises them (case of scheme and host, default port), without
 * query and fragment (RFC 9449 §4.3, point 9).
 */
function htuMatches(htu: string, request: DpopRequest, issuer: string): boolean {
  let named: URL
  try {
    named = new URL(htu)
  } catch {
    return false
  }
  named.search = ''
  named.hash = ''
  const expected = [issuer, request.requestOrigin].flatMap((base) => {
    if (base === undefined) return []
    try {
      return [new URL(`${base}${request.path}`).href]
    } catch {
      return []
    }
  })
  return expected.includes(named.href)
}

/** The message of a failed JWT check, in words safe to send: what jose says, without detail. */
function joseMessage(error: unknown): string {
  if (error instanceof joseErrors.JOSEAlgNotAllowed) {
    return `the DPoP proof's alg must be one of ${DPOP_SIGNING_ALGORITHMS.join(', ')}`
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return "the DPoP proof's signature does not verify"
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'typ') {
    return 'the DPoP proof must have typ dpop+jwt'
  }
  if (error instanceof joseErrors.JWTExpired) return 'the DPoP proof has expired'
  return 'the DPoP proof is not a valid signed JWT with a public jwk'
}
