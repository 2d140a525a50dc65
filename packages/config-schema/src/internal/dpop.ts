/**
 * The DPoP (RFC 9449) fields of a tenant and of its clients.
 *
 * @module
 */
import * as z from 'zod'

/** Client field `dpop_bound_access_tokens` (RFC 9449 §5.2): refuse token requests without a proof. */
export const DpopBoundAccessTokensSchema = z
  .boolean()
  .optional()
  .describe('true: every token request of the client must carry a DPoP proof (RFC 9449)')

/** Tenant field `dpop_nonce` (RFC 9449 §8): proofs must carry a server nonce. */
export const DpopNonceSchema = z
  .boolean()
  .optional()
  .describe('true: DPoP proofs must carry a nonce the issuer gave (DPoP-Nonce, RFC 9449 §8)')
