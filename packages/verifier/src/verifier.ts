import type { Algorithm, VerifierOptions, VerifierStats } from './options.js'
import { createEngine, verifierOf } from './internal/engine.js'
import { resolveOptions } from './internal/options.js'
import { attachMetadata } from './internal/resource-metadata.js'

/**
 * The claims of a verified access token. `iss` and `exp` are always present and checked; the
 * others are as the issuer wrote them.
 */
export interface AccessTokenClaims {
  /** The issuer URL, one of the configured issuers. */
  iss: string
  /** Expiry, in seconds since the epoch. */
  exp: number
  /** The subject: the user, or the client for client tokens. Not checked. */
  sub?: string
  /** The audience; checked when `audience` is configured. */
  aud?: string | string[]
  /** Issued at, in seconds; refused when in the future beyond `clockTolerance`. */
  iat?: number
  /** Not before, in seconds; refused when in the future beyond `clockTolerance`. */
  nbf?: number
  /** The token's unique id. Not checked (no replay detection). */
  jti?: string
  /** The client the token was issued to. Not checked. */
  client_id?: string
  /** Space-separated scopes (RFC 9068 §2.2.3); must be a string when present. */
  scope?: string
  /** Any other claim, unchecked. */
  [claim: string]: unknown
}

/** The protected header of a verified token. */
export interface TokenHeader {
  /** The algorithm, one of `algorithms`. */
  alg: Algorithm
  /** `JWT` for Tessera tokens. Not checked. */
  typ?: string
  /** The key id; RS256 only. */
  kid?: string
  /** Any other header parameter, unchecked. */
  [parameter: string]: unknown
}

/** What {@link Verifier.verify} resolves to. */
export interface VerifiedToken {
  /** The verified claims. */
  payload: AccessTokenClaims
  /** The verified protected header. */
  protectedHeader: TokenHeader
}

/** A token verifier with its own key caches and counters; create one per process and reuse it. */
export interface Verifier {
  /**
   * Verifies a compact JWS access token: length, structure, `alg` against `algorithms`, `iss`
   * against the configured issuers, `exp`, `nbf`, `iat` and `aud`, then the signature with the
   * key that the algorithm's source gives (HS256: the secret; RS256: the issuer's JWKS by
   * `kid`). Throws a {@link VerifierError}.
   */
  verify(token: string): Promise<VerifiedToken>
  /** A snapshot of the counters: JWKS fetches and failures, stale keys, kids, per-alg totals. */
  stats(): VerifierStats
  /** The configured issuers. */
  readonly issuers: readonly string[]
}

/**
 * Creates a verifier for Tessera access tokens. Options are checked once, here: a bad option
 * throws a `TypeError` naming it (a secret under 32 characters, HS256 without a secret, an
 * issuer that is not an http(s) URL, an unknown option, …).
 *
 * Key selection follows the algorithm, from a fixed source: an HS256 token is checked with the
 * secret alone, whatever `kid` it carries, and never causes a fetch; an RS256 token only with a
 * key from its issuer's JWKS, found by `kid`. The RSA public key can therefore never serve as
 * an HMAC secret, and `alg: none` or an algorithm outside `algorithms` is refused before any
 * network call.
 *
 * With `resourceMetadata`, the adapters' `protectedResourceMetadata` serves the API's RFC 9728
 * metadata, and their 401 challenges name its URL.
 *
 * With `dpop`, the adapters accept a DPoP-bound token (`cnf.jkt`) only as `Authorization: DPoP`
 * with a valid proof of its key (RFC 9449); `verify` itself checks the token alone.
 *
 * Not checked: `sub`, `jti` (no replay detection), `client_id`, the `typ` header, revocation
 * (the issuer is never asked), and, by `verify`, proof-of-possession (`cnf`). `scope` is checked
 * by the adapters' `requireScope` only.
 *
 * @example
 * ```ts
 * import { createVerifier } from '@tessera/verifier'
 *
 * const verifier = createVerifier({
 *   issuer: ['https://acme.example.com', 'https://legacy.example.com'],
 *   audience: 'https://api.acme.test',
 *   secret: process.env.JWT_SECRET, // enables HS256; leave out once every issuer uses RS256
 * })
 * const { payload } = await verifier.verify(token)
 * ```
 * @see RFC 8725 (JSON Web Token Best Current Practices)
 * @see RFC 7519 §7.2 (Validating a JWT)
 */
export function createVerifier(options: VerifierOptions): Verifier {
  // Options are checked here, once; the engine's steps are what the adapters call.
  const settings = resolveOptions(options)
  return attachMetadata(verifierOf(createEngine(settings)), settings.resourceMetadata)
}
