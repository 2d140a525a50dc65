import { OAuthError } from '../errors.js'

/** What a token request's DPoP proof means for the grant that runs it. */
export interface DpopBinding {
  /** The thumbprint of the proof's key; absent when the request carried no proof. */
  jkt?: string
  /**
   * The client authenticated with `none`: its refresh tokens are bound to the proof's key too
   * (RFC 9449 §5), where a confidential client's are bound to its credentials already.
   */
  publicClient: boolean
}

/** The binding of a request without a DPoP proof. */
export const NO_DPOP: DpopBinding = { publicClient: false }

/**
 * Refuses a request whose proof was not made with the key `bound` names (a code with
 * `dpop_jkt`, a bound refresh token); nothing is spent before this check.
 *
 * @throws OAuthError `invalid_dpop_proof` without a proof, `invalid_grant` with another key
 */
export function checkBoundKey(bound: string | undefined, binding: DpopBinding, what: string): void {
  if (bound === undefined) return
  if (binding.jkt === undefined) {
    throw new OAuthError('invalid_dpop_proof', `${what} is bound to a DPoP key: send a DPoP proof`)
  }
  if (binding.jkt !== bound) {
    throw new OAuthError('invalid_grant', `${what} is bound to another DPoP key`)
  }
}

/** An RFC 7638 SHA-256 thumbprint as `dpop_jkt` carries it: 32 bytes, base64url. */
export function isJwkThumbprint(value: string): boolean {
  return /^[\w-]{43}$/.test(value)
}
