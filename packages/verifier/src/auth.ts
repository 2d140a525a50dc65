import type { AccessTokenClaims, TokenHeader } from './verifier.js'

/**
 * What the adapters attach to a request once its bearer token is verified: Koa's
 * `ctx.state.auth`, Express's `req.auth`, the `auth` of a fetch {@link VerifyRequestResult}.
 */
export interface AuthContext {
  /** The access token as received (after `Bearer ` or `DPoP `). */
  token: string
  /** The verified claims. */
  payload: AccessTokenClaims
  /** The verified protected header. */
  protectedHeader: TokenHeader
  /** The `scope` claim split on spaces; empty when absent. */
  scopes: readonly string[]
  /**
   * The RFC 7638 thumbprint of the key the token is bound to (`cnf.jkt`), present only when the
   * token is DPoP-bound and came with a valid proof of that key (verifier option `dpop`).
   */
  jkt?: string
}
