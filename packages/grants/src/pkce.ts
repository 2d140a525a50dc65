import { createHash, timingSafeEqual } from 'node:crypto'

// RFC 7636 §4.1: code-verifier = 43*128unreserved; unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
// RFC 7636 §4.2: the S256 challenge is BASE64URL(SHA256(verifier)): always 43 characters.
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/

/** Whether a `code_verifier` has the syntax of RFC 7636 §4.1. */
export function isCodeVerifier(value: string): boolean {
  return VERIFIER.test(value)
}

/** Whether a `code_challenge` can be an S256 challenge. */
export function isS256Challenge(value: string): boolean {
  return S256_CHALLENGE.test(value)
}

/**
 * Checks a verifier against an S256 challenge in constant time.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
export function verifyS256(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'))
  const expected = Buffer.from(challenge)
  return computed.length === expected.length && timingSafeEqual(computed, expected)
}
