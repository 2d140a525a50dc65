import { VerifierError } from '../errors.js'

/** The JSON object of a token's header or payload, not yet trusted. */
export type JsonObject = Record<string, unknown>

/** The three segments of a compact JWS, as they appear in the token. */
export interface CompactSegments {
  protected: string
  payload: string
  signature: string
}

// Three non-empty base64url segments (RFC 7515 §7.1; no padding, RFC 7515 §2).
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

// Header parameters this verifier refuses outright. jku, jwk, x5u and x5c would name a key or a
// place to fetch one from: keys come from configuration only (RFC 8725 §3.10), so such a token
// is either an attack or from an issuer this verifier was not configured for. crit names
// extensions that must be understood (RFC 7515 §4.1.11) and this verifier understands none;
// b64 (RFC 7797) is not allowed in JWTs.
const REFUSED_HEADER_PARAMETERS = ['jku', 'jwk', 'x5u', 'x5c', 'crit', 'b64']

function malformed(message: string): VerifierError {
  return new VerifierError('ERR_TOKEN_MALFORMED', message)
}

function decodeObject(segment: string, what: string): JsonObject {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
  } catch {
    throw malformed(`The token ${what} is not JSON`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(`The token ${what} is not a JSON object`)
  }
  return value as JsonObject
}

function decodeHeader(segment: string): JsonObject {
  const header = decodeObject(segment, 'header')
  for (const name of REFUSED_HEADER_PARAMETERS) {
    if (Object.hasOwn(header, name)) {
      throw malformed(`The token header parameter ${name} is not accepted`)
    }
  }
  return header
}

// Enough for every header an issuer uses at once (one per algorithm and key id, a few during a
// rotation); a flood of distinct headers only clears it, which costs what no cache would.
const MAX_CACHED_HEADERS = 64

/**
 * Decoded headers by their base64url segment. The tokens of one issuer and key share one header
 * byte for byte, so decoding it (base64url, JSON, the refused parameters) once per segment is
 * enough; the result is a pure function of the segment. Only headers that decoded without error
 * are kept, frozen, and they never leave the verifier.
 */
export class HeaderCache {
  readonly #headers = new Map<string, JsonObject>()

  /** The decoded header of a segment; throws `ERR_TOKEN_MALFORMED` as {@link decodeToken} does. */
  decode(segment: string): JsonObject {
    let header = this.#headers.get(segment)
    if (header === undefined) {
      header = Object.freeze(decodeHeader(segment))
      if (this.#headers.size >= MAX_CACHED_HEADERS) this.#headers.clear()
      // A copy of the key: a slice of the token may share the token's memory, and a cache
      // must not keep a usable token alive.
      this.#headers.set(Buffer.from(segment, 'latin1').toString('latin1'), header)
    }
    return header
  }
}

/**
 * The three segments of `token` when it is three non-empty base64url segments joined by dots
 * (the compact JWS shape, RFC 7515 §7.1; no padding, RFC 7515 §2); `undefined` otherwise.
 */
export function compactSegments(token: string): CompactSegments | undefined {
  if (!COMPACT_JWS.test(token)) return undefined
  const first = token.indexOf('.')
  const second = token.indexOf('.', first + 1)
  return {
    protected: token.slice(0, first),
    payload: token.slice(first + 1, second),
    signature: token.slice(second + 1),
  }
}

/**
 * Splits a compact JWS into its three segments, refusing anything but three non-empty base64url
 * segments. Throws `ERR_TOKEN_MALFORMED`.
 *
 * @see RFC 7515 §7.1 (JWS Compact Serialization)
 */
export function splitToken(token: string): CompactSegments {
  const segments = compactSegments(token)
  if (segments === undefined) throw malformed('The token is not a JWS in compact form')
  return segments
}

/** Decodes a payload segment to a JSON object, unverified; throws `ERR_TOKEN_MALFORMED`. */
export function decodePayload(segment: string): JsonObject {
  return decodeObject(segment, 'payload')
}

/**
 * Splits a compact JWS and decodes its header and payload without verifying anything: the
 * header to choose the algorithm and key, the payload to choose the issuer (and so the key
 * source) before any network call. Throws `ERR_TOKEN_MALFORMED`.
 *
 * @see RFC 7515 §7.1 (JWS Compact Serialization)
 */
export function decodeToken(token: string): { header: JsonObject; payload: JsonObject } {
  const segments = splitToken(token)
  return { header: decodeHeader(segments.protected), payload: decodePayload(segments.payload) }
}
