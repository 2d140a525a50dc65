import { createHash } from 'node:crypto'
import { errors, jwtVerify } from 'jose'
import type { JWTVerifyOptions } from 'jose'
import { createMemoryReplayCache } from '../dpop-replay-cache.js'
import type { DpopReplayCache } from '../dpop-replay-cache.js'
import { VerifierError } from '../errors.js'
import { DPOP_ACCEPTED_ALGORITHMS } from './dpop-options.js'
import type { ResolvedDpop } from './dpop-options.js'
import { invalid, ProofKeyCache } from './proof-keys.js'

/** What a proof is checked against: the request as the adapter received it. */
export interface ProofRequest {
  /** The request method, as received (`htm` is compared with it exactly). */
  method: string
  /** The absolute URL of the request as the server received it. */
  url: string
  /** The `DPoP` header; several are joined with `, ` (as Node and `Headers` do). */
  proof: string | null | undefined
}

/**
 * The {@link ProofRequest} of a Node request: `origin` is `scheme://host` as the server sees it,
 * `target` the request target (path and query) as received; a repeated header is joined.
 */
export function proofRequestOf(
  method: string,
  origin: string,
  target: string,
  proof: string | readonly string[] | undefined,
): ProofRequest {
  return {
    method,
    url: origin + target,
    proof: typeof proof === 'string' ? proof : proof?.join(', '),
  }
}

/** The DPoP checks of one verifier. */
export interface DpopChecker {
  /** Whether `Bearer` tokens are refused altogether. */
  readonly required: boolean
  /**
   * Checks the proof of a request that presents `token`, bound to the key with thumbprint `jkt`,
   * and records its `jti`. Rejects with a {@link VerifierError} whose scheme is `DPoP`.
   */
  check(token: string, jkt: string, request: ProofRequest): Promise<void>
}

// A proof is a small JWT with one public key; an RSA 4096 one is about 1.5 KB.
const MAX_PROOF_LENGTH = 8192
// Longer jtis would only cost replay cache memory; clients use 16 to 43 characters.
const MAX_JTI_LENGTH = 256
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** The URL without query and fragment, normalised as WHATWG URL parsing does; or undefined. */
function htuOf(value: string): string | undefined {
  try {
    const url = new URL(value)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined
    url.search = ''
    url.hash = ''
    return url.href
  } catch {
    return undefined
  }
}

/** The `htu` the request's proof must carry: under the public origin when one is set. */
function expectedHtu(request: ProofRequest, publicOrigin: string | undefined): string | undefined {
  const received = htuOf(request.url)
  if (received === undefined || publicOrigin === undefined) return received
  return htuOf(publicOrigin + new URL(received).pathname)
}

/** Our refusal for what jose throws while verifying a proof. */
function fromJose(error: unknown): VerifierError {
  if (error instanceof VerifierError) return error
  if (error instanceof errors.JWTExpired) {
    return invalid('The DPoP proof has expired', error.claim, error)
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return invalid(`The DPoP proof ${error.claim} is invalid`, error.claim, error)
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return invalid('The DPoP proof signature is invalid', 'signature', error)
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return invalid('The DPoP proof algorithm is not accepted', 'alg', error)
  }
  return invalid('The DPoP proof is malformed', undefined, error)
}

/**
 * The DPoP checks of a verifier with the `dpop` option, on its clock and clock tolerance.
 *
 * @see RFC 9449 §4.3 (Checking DPoP Proofs), §7.1 (DPoP Access Token Request)
 */
export function createDpopChecker(
  dpop: ResolvedDpop,
  clock: { now: () => number; clockTolerance: number },
): DpopChecker {
  const { now, clockTolerance } = clock
  const replayCache: DpopReplayCache = dpop.replayCache ?? createMemoryReplayCache({ now })
  const window = dpop.maxAge + clockTolerance * 1000
  const proofKeys = new ProofKeyCache()
  const joseOptions = {
    typ: 'dpop+jwt',
    algorithms: [...DPOP_ACCEPTED_ALGORITHMS],
    requiredClaims: ['iat', 'jti', 'htm', 'htu'],
    clockTolerance,
  } satisfies JWTVerifyOptions

  const remember = async (jti: string, expiresAt: number): Promise<void> => {
    let added: unknown
    try {
      added = await replayCache.add(jti, expiresAt)
    } catch (error) {
      if (error instanceof VerifierError && error.code === 'ERR_REPLAY_CACHE_UNAVAILABLE') {
        throw new VerifierError(error.code, error.message, {
          scheme: 'DPoP',
          ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
        })
      }
      throw new VerifierError(
        'ERR_REPLAY_CACHE_UNAVAILABLE',
        'The DPoP proof cannot be checked for replay now',
        { scheme: 'DPoP', retryAfter: 1, cause: error },
      )
    }
    if (added !== true) throw invalid('The DPoP proof was used before', 'jti')
  }

  return {
    required: dpop.required,
    async check(token, jkt, request) {
      const proof = request.proof
      if (proof === undefined || proof === null || proof === '') {
        throw invalid('A DPoP proof is required')
      }
      if (proof.includes(',')) throw invalid('The request has more than one DPoP header')
      if (proof.length > MAX_PROOF_LENGTH) throw invalid('The DPoP proof is too long')
      if (!COMPACT_JWS.test(proof)) throw invalid('The DPoP proof is not a compact JWS')
      const proofKey = await proofKeys.of(proof)
      const at = now()
      const verifyOptions = { ...joseOptions, currentDate: new Date(at) }
      const { payload } = await jwtVerify(proof, proofKey.key, verifyOptions).catch((error) => {
        throw fromJose(error)
      })
      // In ms, not jose's whole seconds: the proof is acceptable exactly while its jti is
      // remembered (until expiresAt, excluded), so no instant exists where it passes unrecorded.
      const expiresAt = (payload.iat as number) * 1000 + window
      if ((payload.iat as number) * 1000 > at + clockTolerance * 1000) {
        throw invalid('The DPoP proof iat is in the future', 'iat')
      }
      if (at >= expiresAt) throw invalid('The DPoP proof is too old', 'iat')
      if (payload.htm !== request.method) throw invalid('The DPoP proof htm does not match', 'htm')
      const htu = typeof payload.htu === 'string' ? htuOf(payload.htu) : undefined
      if (htu === undefined || htu !== expectedHtu(request, dpop.publicOrigin)) {
        throw invalid('The DPoP proof htu does not match the request URL', 'htu')
      }
      if (payload.ath !== createHash('sha256').update(token).digest('base64url')) {
        throw invalid('The DPoP proof ath does not match the access token', 'ath')
      }
      const { jti } = payload
      if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) {
        throw invalid('The DPoP proof jti is invalid', 'jti')
      }
      if (proofKey.jkt !== jkt) {
        throw invalid('The DPoP proof key is not the key the token is bound to', 'jwk')
      }
      // Last: only a proof that passed everything else is remembered.
      await remember(jti, expiresAt)
    },
  }
}
