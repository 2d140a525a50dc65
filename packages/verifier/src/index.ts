/**
 * @tessera/verifier — verifies Tessera access tokens in resource servers: HS256 with the shared
 * secret and RS256 with each issuer's cached JWKS, side by side, so that an API keeps working
 * while its issuers move from one to the other. Framework adapters live on subpaths:
 * `@tessera/verifier/koa`, `@tessera/verifier/express` and `@tessera/verifier/fetch`.
 *
 * @example
 * ```ts
 * import { createVerifier } from '@tessera/verifier'
 *
 * const verifier = createVerifier({ issuer: 'https://acme.example.com', secret: process.env.JWT_SECRET })
 * const { payload, protectedHeader } = await verifier.verify(token)
 * ```
 *
 * @module
 */
export { createVerifier } from './verifier.js'
export type { AccessTokenClaims, TokenHeader, VerifiedToken, Verifier } from './verifier.js'
export type {
  Algorithm,
  DpopOptions,
  FetchLike,
  ProtectedResourceMetadata,
  ResourceMetadataOptions,
  VerifierEvent,
  VerifierOptions,
  VerifierStats,
} from './options.js'
export { VerifierError, isVerifierError } from './errors.js'
export type { AuthScheme, VerifierErrorCode, VerifierErrorDetails } from './errors.js'
export { createMemoryReplayCache } from './dpop-replay-cache.js'
export type { DpopReplayCache, MemoryReplayCacheOptions } from './dpop-replay-cache.js'
export { DEFAULT_REALM, renderError } from './render.js'
export type { ErrorBody, ErrorResponse, RenderOptions } from './render.js'
export type { AuthContext } from './auth.js'
