import type { AccessTokenClaims, TokenHeader } from './verifier.js'

/**
 * What the adapters attach to a request once its bearer token is verified: Koa's
 * `ctx.state.auth`, Express's `req.auth`, the `auth` of a fetch {@link VerifyRequestResult}.
 */
export interface AuthContext {
  /** The bearer token as received. */
  token: string
  /** The verified claims. */
  payload: AccessTokenClaims
  /** The verified protected header. */
  protectedHeader: TokenHeader
  /** The `scope` claim split on spaces; empty when absent. */
  scopes: readonly string[]
}
