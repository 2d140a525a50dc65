import { VerifierError } from '../errors.js'

/** The JSON object of a token's header or payload, not yet trusted. */
export type JsonObject = Record<string, unknown>

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

/**
 * Splits a compact JWS and decodes its header and payload without verifying anything: the
 * header to choose the algorithm and key, the payload to choose the issuer (and so the key
 * source) before any network call. Throws `ERR_TOKEN_MALFORMED`.
 *
 * @see RFC 7515 §7.1 (JWS Compact Serialization)
 */
export function decodeToken(token: string): { header: JsonObject; payload: JsonObject } {
  if (!COMPACT_JWS.test(token)) throw malformed('The token is not a JWS in compact form')
  const [header, payload] = token.split('.') as [string, string, string]
  const decodedHeader = decodeObject(header, 'header')
  for (const name of REFUSED_HEADER_PARAMETERS) {
    if (Object.hasOwn(decodedHeader, name)) {
      throw malformed(`The token header parameter ${name} is not accepted`)
    }
  }
  return { header: decodedHeader, payload: decodeObject(payload, 'payload') }
}
